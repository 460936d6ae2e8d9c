# Rebuilds the bundled catalog's other projects from their git histories (issue 25); burn's own
# folder is rebuilt as catalog/README.md says. Each variable names a clone (bare or not) with its
# release tags:
#
#     make catalog CUBECL=~/src/cubecl BURN_ONNX=~/src/burn-onnx WGPU=~/src/wgpu NDARRAY=~/src/ndarray
#
# A project is rebuilt when its clone's refs or its folder's scan setting are newer than its
# history file (`make -B catalog` rebuilds all). Only derived data is written: ids, paths, lines,
# messages, versions, commit SHAs. The tags are the releases burn's Cargo.lock pinned (see each
# folder's project.toml).
TRIAGE ?= triage-bot
HISTORY = $(TRIAGE) catalog history

refs = $(wildcard $(1)/packed-refs $(1)/refs/tags $(1)/.git/packed-refs)

.PHONY: catalog
catalog: catalog/cubecl/history.ndjson catalog/burn-onnx/history.ndjson \
         catalog/wgpu/history.ndjson catalog/ndarray/history.ndjson
	$(TRIAGE) catalog validate catalog

catalog/cubecl/history.ndjson: $(call refs,$(CUBECL)) catalog/cubecl/project.toml
	$(HISTORY) "$(CUBECL)" --repo tracel-ai/cubecl \
	    --tags '^v0\.(2|3|4|5|6|8|9|10)\.\d+$$|^v0\.11\.0-pre\.2$$' --include-head \
	    --path crates --out catalog/cubecl

catalog/burn-onnx/history.ndjson: $(call refs,$(BURN_ONNX)) catalog/burn-onnx/project.toml
	$(HISTORY) "$(BURN_ONNX)" --repo tracel-ai/burn-onnx --tags '^v0\.21\.0-pre\.1$$' \
	    --include-head --path crates/burn-onnx --path crates/onnx-ir --path crates/burn-import \
	    --path crates/onnx-ir-derive --out catalog/burn-onnx

catalog/wgpu/history.ndjson: $(call refs,$(WGPU)) catalog/wgpu/project.toml
	$(HISTORY) "$(WGPU)" --repo gfx-rs/wgpu --tags '^v(0\.18\.0|0\.19\.4|22\.1\.0)$$' \
	    --include-head --path wgpu --path wgpu-core --path wgpu-hal --path naga --out catalog/wgpu

catalog/ndarray/history.ndjson: $(call refs,$(NDARRAY)) catalog/ndarray/scan.toml \
                                catalog/ndarray/project.toml
	$(HISTORY) "$(NDARRAY)" --repo rust-ndarray/ndarray \
	    --tags '^(0\.15\.6|0\.16\.1|0\.17\.1|0\.17\.2)$$' --include-head --path src \
	    --config catalog/ndarray/scan.toml --out catalog/ndarray
