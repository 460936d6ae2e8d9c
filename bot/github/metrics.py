"""A few counters, gauges and one histogram, written in the Prometheus text format (0.0.4)."""

from __future__ import annotations

import threading
from collections.abc import Callable

Labels = tuple[tuple[str, str], ...]
DEFAULT_BUCKETS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Labels, extra: str = "") -> str:
    parts = [f'{k}="{_escape(v)}"' for k, v in labels]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._help: dict[str, tuple[str, str]] = {}  # name -> (type, help)
        self._counters: dict[str, dict[Labels, float]] = {}
        self._gauges: dict[str, Callable[[], float]] = {}
        self._hist: dict[str, tuple[tuple[float, ...], dict[Labels, list[float]]]] = {}
        self.counter("triage_deliveries_total", "Webhook deliveries accepted, by event and outcome")
        self.counter("triage_deliveries_refused_total", "Webhook deliveries refused, by reason")
        self.counter("triage_verdicts_total", "Analyses of issues, by verdict")
        self.counter("triage_github_api_calls_total", "GitHub API operations, by operation")
        self.counter("triage_github_api_errors_total", "GitHub API errors, by status")
        self.counter("triage_jobs_total", "Jobs finished, by outcome (done, retry, dead)")
        self.histogram(
            "triage_reply_seconds", "Seconds from a delivery to the bot's reply on GitHub"
        )

    def counter(self, name: str, help_text: str) -> None:
        with self._lock:
            self._help[name] = ("counter", help_text)
            self._counters.setdefault(name, {})

    def gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        with self._lock:
            self._help[name] = ("gauge", help_text)
            self._gauges[name] = read

    def histogram(
        self, name: str, help_text: str, buckets: tuple[float, ...] = DEFAULT_BUCKETS
    ) -> None:
        with self._lock:
            self._help[name] = ("histogram", help_text)
            self._hist.setdefault(name, (buckets, {}))

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        key = tuple(sorted((k, str(v)) for k, v in labels.items()))
        with self._lock:
            series = self._counters.setdefault(name, {})
            series[key] = series.get(key, 0.0) + amount

    def observe(self, name: str, value: float, **labels: str) -> None:
        key = tuple(sorted((k, str(v)) for k, v in labels.items()))
        with self._lock:
            buckets, series = self._hist[name]
            counts = series.setdefault(key, [0.0] * (len(buckets) + 2))  # buckets, +Inf, sum
            for i, bound in enumerate(buckets):
                if value <= bound:
                    counts[i] += 1
            counts[len(buckets)] += 1
            counts[len(buckets) + 1] += value

    def value(self, name: str, **labels: str) -> float:
        key = tuple(sorted((k, str(v)) for k, v in labels.items()))
        with self._lock:
            return self._counters.get(name, {}).get(key, 0.0)

    def render(self) -> str:
        lines: list[str] = []
        with self._lock:
            names = sorted(self._help)
            for name in names:
                kind, help_text = self._help[name]
                lines.append(f"# HELP {name} {help_text}")
                lines.append(f"# TYPE {name} {kind}")
                if kind == "counter":
                    for key, value in sorted(self._counters.get(name, {}).items()):
                        lines.append(f"{name}{_labels(key)} {value:g}")
                elif kind == "gauge":
                    try:
                        value = float(self._gauges[name]())
                    except Exception:  # a broken reader must not break /metrics
                        continue
                    lines.append(f"{name} {value:g}")
                else:
                    buckets, series = self._hist[name]
                    for key, counts in sorted(series.items()):
                        for i, bound in enumerate(buckets):
                            le = _labels(key, f'le="{bound:g}"')
                            lines.append(f"{name}_bucket{le} {counts[i]:g}")
                        le = _labels(key, 'le="+Inf"')
                        lines.append(f"{name}_bucket{le} {counts[len(buckets)]:g}")
                        lines.append(f"{name}_sum{_labels(key)} {counts[len(buckets) + 1]:g}")
                        lines.append(f"{name}_count{_labels(key)} {counts[len(buckets)]:g}")
        return "\n".join(lines) + "\n"
