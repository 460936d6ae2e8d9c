"""What the scanner reads of the code around a panic site: the record's `check` object."""

from __future__ import annotations

from bot.scan.rust.site_finder import scan_source

SOURCE = b'''
impl<B: Backend> Tensor<B> {
    pub fn reshape(self, shape: Shape) -> Self {
        if shape.num_elements() != self.shape().num_elements() {
            panic!("bad reshape {}", 1);
        }
        assert_eq!(a.len(), b.len(), "lens differ {}", x);
        let x = y
            .get(0)
            .expect("need one");
        match dtype {
            DType::F32 => 1,
            DType::F16 => panic!("half is not handled"),
            dtype => panic!("unsupported {dtype:?}"),
        }
        let Some(h) = self.handles.get(&id) else { panic!("Should have handle for tensor {id:?}") };
        let z = m.get(&id).unwrap_or_else(|| panic!("missing {id}"));
        if a { 1 } else { unimplemented!("nope") }
        if a { 1 } else if b { 2 } else { panic!("neither") }
        panic!("always");
    }
}
impl FloatTensorOps<Self> for Candle { fn float_erf(t: T) -> T { todo!("erf not supported") } }
'''


def checks() -> dict[str, dict[str, str]]:
    return {s.message_format: dict(s.check) for s in scan_source(SOURCE, "src/a.rs").sites}


def test_each_kind_of_guard_is_read_from_the_tree() -> None:
    found = checks()
    impl = {"impl": "impl Tensor<B>"}
    assert found["bad reshape {}"] == {
        "kind": "if",
        "code": "shape.num_elements() != self.shape().num_elements()",
        **impl,
    }
    assert found["lens differ {}"] == {"kind": "assert", "code": "a.len() == b.len()", **impl}
    assert found["need one"] == {"kind": "expect", "code": "y.get(0)", **impl}
    assert found["half is not handled"] == {
        "kind": "arm",
        "code": "dtype",
        "pattern": "DType::F16",
        **impl,
    }
    assert found["unsupported {dtype:?}"]["pattern"] == "dtype"
    assert found["Should have handle for tensor {id:?}"] == {
        "kind": "mismatch",
        "code": "self.handles.get(&id)",
        "pattern": "Some(h)",
        **impl,
    }
    assert found["missing {id}"] == {"kind": "expect", "code": "m.get(&id)", **impl}
    assert found["nope"] == {"kind": "else", "code": "a", **impl}
    assert found["erf not supported"] == {"impl": "impl FloatTensorOps<Self> for Candle"}


def test_nothing_is_claimed_when_the_guard_is_not_the_only_one() -> None:
    found = checks()
    assert found["neither"] == {"impl": "impl Tensor<B>"}  # the last else of an else-if chain
    assert found["always"] == {"impl": "impl Tensor<B>"}
