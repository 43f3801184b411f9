"""The thresholds table (``thresholds.toml``, each figure with its source), a site's override, the lookup.

Rows of a site file are tried before the repository's; the most specific matching row wins (see the
table's header). Lookup runs once per distinct (speed, FEC, cable) combination, so grading stays
vectorized however many ports there are.
"""

from __future__ import annotations

import fnmatch
import itertools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import FormatError
from .records import CATEGORIES

__all__ = ["TABLE", "MEASURES", "Thresholds", "load", "normalize_fec", "normalize_cable"]

#: The repository's table.
TABLE = Path(__file__).with_name("thresholds.toml")
#: BER measures a row may grade.
MEASURES = ("raw", "effective", "symbol")
MODULE_QUANTITIES = ("temp", "voltage", "bias", "rx_power", "tx_power")
_BER_KEYS = {"speed", "fec", "cable", "measure", "normal", "warning", "error", "min_window_s", "source"}
_MODULE_KEYS = {"quantity", "alarm_low", "warning_low", "warning_high", "alarm_high", "source"}
MAX_TABLE_BYTES = 1 << 20


@dataclass(frozen=True)
class Thresholds:
    """Rows of ``[[ber]]`` and ``[[module]]`` tables, site rows first; ``files`` they came from."""

    ber: tuple[dict, ...]
    module: tuple[dict, ...]
    files: tuple[str, ...]
    _tables: dict = field(default_factory=dict, repr=False, compare=False)

    def ber_limits(self, measure: str, speed: np.ndarray, fec: np.ndarray, cable: np.ndarray) -> np.ndarray:
        """Per port (normal, error, min_window_s, row index) for ``measure``, from the codes of
        :data:`~.records.CATEGORIES`; NaN and -1 where no row matches."""
        nf, nc = len(CATEGORIES["fec"]), len(CATEGORIES["cable"])
        combo = (speed.astype(np.int32) * nf + fec) * nc + cable
        return self._tables[measure][combo]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_tables", {m: self._dense(m) for m in MEASURES})

    def _dense(self, measure: str) -> np.ndarray:
        """Limits of every (speed, FEC, cable) combination, flattened in that order."""
        names = [CATEGORIES[k] for k in ("speed", "fec", "cable")]
        rows = [(i, r) for i, r in enumerate(self.ber) if r["measure"] == measure]
        out = np.full((len(names[0]) * len(names[1]) * len(names[2]), 4), np.nan)
        out[:, 3] = -1
        for u, (s, f, c) in enumerate(itertools.product(*names)):
            best, best_spec = None, -1
            for i, r in rows:
                if all(fnmatch.fnmatchcase(v, r[k]) for k, v in (("speed", s), ("fec", f), ("cable", c))):
                    spec = sum(r[k] != "*" for k in ("speed", "fec", "cable"))
                    if spec > best_spec:
                        best, best_spec = i, spec
            if best is not None:
                r = self.ber[best]
                out[u] = (r["normal"], r["error"], r["min_window_s"], best)
        return out

    def module_fallback(self, quantity: str) -> np.ndarray:
        """(alarm_low, warning_low, warning_high, alarm_high) of the first module row for ``quantity``, or NaN."""
        for r in self.module:
            if r["quantity"] == quantity:
                return np.array([r["alarm_low"], r["warning_low"], r["warning_high"], r["alarm_high"]], float)
        return np.full(4, np.nan)


def _read(path: Path) -> tuple[list[dict], list[dict]]:
    source = str(path)
    if path.stat().st_size > MAX_TABLE_BYTES:
        raise FormatError(source, None, f"larger than {MAX_TABLE_BYTES:,} bytes: not a thresholds table")
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise FormatError(source, None, f"not a TOML thresholds table: {exc}") from None
    unknown = set(doc) - {"ber", "module"}
    if unknown:
        raise FormatError(source, None, f"unknown tables {sorted(unknown)} (expected [[ber]] and [[module]])")
    ber, module = list(doc.get("ber", [])), list(doc.get("module", []))
    for i, r in enumerate(ber):
        where = f"[[ber]] row {i + 1}"
        if set(r) != _BER_KEYS:
            raise FormatError(source, None, f"{where}: fields must be {sorted(_BER_KEYS)}, got {sorted(r)}")
        if r["measure"] not in MEASURES:
            raise FormatError(source, None, f"{where}: measure {r['measure']!r} is not one of {MEASURES}")
        for k in ("normal", "warning", "error", "min_window_s"):
            if not isinstance(r[k], int | float) or isinstance(r[k], bool) or not 0 <= r[k] < float("inf"):
                raise FormatError(source, None, f"{where}: {k} must be a non-negative number, got {r[k]!r}")
        if not r["normal"] <= r["warning"] <= r["error"]:
            raise FormatError(source, None, f"{where}: needs normal <= warning <= error")
        for k in ("speed", "fec", "cable", "source"):
            if not isinstance(r[k], str) or not r[k]:
                raise FormatError(source, None, f"{where}: {k} must be a non-empty string")
    for i, r in enumerate(module):
        where = f"[[module]] row {i + 1}"
        if set(r) != _MODULE_KEYS or r.get("quantity") not in MODULE_QUANTITIES:
            raise FormatError(source, None, f"{where}: fields must be {sorted(_MODULE_KEYS)}, quantity one of "
                                            f"{MODULE_QUANTITIES}")
        vals = [r[k] for k in ("alarm_low", "warning_low", "warning_high", "alarm_high")]
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals) or vals != sorted(vals):
            raise FormatError(source, None, f"{where}: needs alarm_low <= warning_low <= warning_high <= alarm_high")
    return ber, module


def load(site: str | Path | None = None) -> Thresholds:
    """The repository's table, with a site's file (same form) tried first when given."""
    ber, module = _read(TABLE)
    files = [str(TABLE)]
    if site is not None:
        sb, sm = _read(Path(site))
        ber, module = sb + ber, sm + module
        files.insert(0, str(site))
    return Thresholds(tuple(ber), tuple(module), tuple(files))


def normalize_fec(text: str) -> str:
    """A tool's name of the active FEC as a table name (``""`` if not recognised).

    >>> [normalize_fec(t) for t in ("Standard RS-FEC (544,514)", "Low_Latency_RS_FEC_PLR", "No FEC", "Firecode FEC")]
    ['kp4_rs_fec', 'll_rs_fec_plr', 'none', 'fc_fec']
    """
    t = text.strip().lower().replace("-", "_").replace(" ", "_")
    if not t or t in ("n/a", "na"):
        return ""
    if "plr" in t:
        return "ll_rs_fec_plr"
    if t in ("no_fec", "none", "no", "0") or t.startswith("no_fec"):
        return "none"
    if "firecode" in t or t in ("fc_fec", "fc"):
        return "fc_fec"
    if "271" in t or "272" in t or "ll_rs" in t or "low_latency" in t:
        return "ll_rs_fec"
    if "544" in t or "kp4" in t or "standard_rs" in t:
        return "kp4_rs_fec"
    if "528" in t or "rs_fec" in t or t == "rs":
        return "rs_fec"
    return ""


def normalize_cable(text: str) -> str:
    """A tool's cable technology or type as ``dac``/``acc``/``aoc``/``optical`` (``""`` if not recognised)."""
    t = text.strip().lower()
    if not t or t in ("n/a", "na"):
        return ""
    if "passive" in t or "dac" in t or "copper cable- passive" in t or "unequalized" in t:  # SFF-8636 0xA/0xB
        return "dac"
    if "active copper" in t or "acc" in t or "copper" in t and "active" in t:
        return "acc"
    if "aoc" in t or "active optical" in t or "optical cable" in t:
        return "aoc"
    if "optical" in t or "vcsel" in t or "nm" in t or "transceiver" in t or "module" in t:
        return "optical"
    return ""
