"""The parameters of each analysis kind as a DRF serializer: limits, defaults, and a message naming each bad field.

:func:`clean_params` picks the kind's serializer (:data:`PARAMS`) and returns the parameters with their
defaults filled in, or raises :class:`~rest_framework.exceptions.ValidationError` ``{field: [message]}``.
Values are taken as JSON gives them (an integer is an integer, never ``"5"`` or ``5.0``; a flag is
``true`` or ``false``), and a wrong value is quoted short (:func:`shown`): a list sent in place of a
number may be long. The kinds and what their parameters mean: :mod:`ibweb.fabrics.analyses`.
"""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.fields import SkipField

from fabric_engine.analysis import PAIR_PATTERNS
from fabric_engine.analysis.congestion import MAX_VLS
from fabric_engine.analysis.ebb import METHODS
from fabric_engine.backpressure.cc_params import CongestionControl
from fabric_engine.errors import FabricEngineError
from fabric_engine.routing import ENGINES

from ..analyses import AnalysisKind

__all__ = ["LIMITS", "MAX_FAILED_SWITCHES", "PARAMS", "clean_params", "shown"]

#: Inclusive ranges of the integer parameters (they bound the work a request may ask for).
LIMITS = {"patterns": (1, 20000), "ebb_patterns": (0, 5000), "seed": (0, 2**32 - 1), "qps": (1, 128),
          "vls": (1, MAX_VLS)}
#: Most switches one live what-if fails.
MAX_FAILED_SWITCHES = 64


def shown(value: object) -> str:
    """``value`` as an error message quotes it: a list or object sent in place of a scalar can be large."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _Param(serializers.Field):
    """A JSON value checked by :meth:`to_internal_value`; ``null`` is checked too (it is a wrong value), unless
    ``null_is_absent``."""

    def __init__(self, *, null_is_absent: bool = False, **kwargs) -> None:
        self.null_is_absent = null_is_absent
        super().__init__(**kwargs)

    def validate_empty_values(self, data):
        if data is None:
            if self.null_is_absent:
                raise SkipField()
            return False, None
        return super().validate_empty_values(data)

    def to_representation(self, value):
        return value


class Count(_Param):
    """An integer within :data:`LIMITS` of its field name."""

    def to_internal_value(self, data) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise ValidationError(f"expected an integer, got {shown(data)}")
        low, high = LIMITS[self.field_name]
        if not low <= data <= high:
            raise ValidationError(f"{data} is outside {low}..{high}")
        return data


class Choice(_Param):
    """One string of ``choices``."""

    def __init__(self, choices, **kwargs) -> None:
        self.choices = frozenset(choices)
        listed = ", ".join(sorted(self.choices))
        kwargs.setdefault("error_messages", {"required": f"required: one of {listed}"})
        super().__init__(**kwargs)

    def to_internal_value(self, data) -> str:
        if data is None:
            self.fail("required")
        listed = ", ".join(sorted(self.choices))
        if not isinstance(data, str):  # a list or object is not even hashable (issue 26: a 500 before)
            raise ValidationError(f"expected a string, one of {listed}; got {shown(data)}")
        if data not in self.choices:
            raise ValidationError(f"{shown(data)} is not one of {listed}")
        return data


class Flag(_Param):
    def to_internal_value(self, data) -> bool:
        if not isinstance(data, bool):
            raise ValidationError(f"expected true or false, got {shown(data)}")
        return data


class Cables(_Param):
    """A non-empty list of distinct cable indices ``0..num_links - 1`` (``context["num_links"]``), sorted."""

    default_error_messages = {"required": "required: a non-empty list of cable indices"}

    def to_internal_value(self, data) -> list[int]:
        if not isinstance(data, list) or not data:
            self.fail("required")
        num_links = self.context["num_links"]
        for i, c in enumerate(data):
            if isinstance(c, bool) or not isinstance(c, int):
                raise ValidationError(f"item {i}: expected a cable index, got {shown(c)}")
            if not 0 <= c < num_links:
                raise ValidationError(f"item {i}: cable {c} is outside 0..{num_links - 1}")
        if len(set(data)) != len(data):
            raise ValidationError("lists a cable twice")
        return sorted(data)


class SwitchNames(_Param):
    """At most :data:`MAX_FAILED_SWITCHES` switch names of 1..64 characters, each once, sorted."""

    def to_internal_value(self, data) -> list[str]:
        if not isinstance(data, list) or len(data) > MAX_FAILED_SWITCHES or not all(
                isinstance(x, str) and 0 < len(x) <= 64 for x in data):
            raise ValidationError(f"expected at most {MAX_FAILED_SWITCHES} switch names")
        return sorted(set(data))


class CongestionControlSettings(_Param):
    """An object of :class:`~fabric_engine.backpressure.cc_params.CongestionControl` fields (per-SL fields: one
    integer or 16; ``cct``: ``[[shift, multiplier], ...]``), checked against their IBA ranges; returned whole."""

    def to_internal_value(self, data) -> dict:
        try:
            return CongestionControl.from_dict(data).as_dict()
        except FabricEngineError as exc:
            raise ValidationError(str(exc).removeprefix("congestion_control: ")[:300]) from exc


class _Params(serializers.Serializer):
    """An unknown parameter is an error of its own name (checked before the others)."""

    def to_internal_value(self, data) -> dict:
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise ValidationError({unknown[0]: [f"unknown parameter of {self.kind}; "
                                                f"known: {', '.join(sorted(self.fields))}"]})
        return dict(super().to_internal_value(data))


class EbbParams(_Params):
    kind = AnalysisKind.EBB
    patterns = Count(default=1000, help_text="random patterns, 1..20000")
    seed = Count(default=1)
    method = Choice(METHODS, default="count")
    pattern = Choice(PAIR_PATTERNS, default="bisection")
    engine = Choice(ENGINES, required=False, help_text="default: the fabric's routing engine")


class WhatIfLinksParams(_Params):
    kind = AnalysisKind.WHATIF_LINKS
    ebb_patterns = Count(default=200, help_text="0: no eBB per side")
    seed = Count(default=1)
    failed_cables = Cables()


class WhatIfEngineParams(_Params):
    kind = AnalysisKind.WHATIF_ENGINE
    ebb_patterns = Count(default=200, help_text="0: no eBB per side")
    seed = Count(default=1)
    engine = Choice(ENGINES)


class WhatIfRoceParams(_Params):
    kind = AnalysisKind.WHATIF_ROCE
    qps = Count(default=1, help_text="queue pairs per connection")
    seed = Count(default=1, help_text="of the switches' hash seeds")
    same_seed = Flag(default=False, help_text="one seed everywhere (polarization)")


class WhatIfCongestionParams(_Params):
    kind = AnalysisKind.WHATIF_CONGESTION
    vls = Count(default=4, help_text="lanes the jobs are spread over by VL separation, 1..15")
    congestion_control = CongestionControlSettings(required=False, null_is_absent=True,
                                                   help_text="default: the fabric's, else the default profile")


class WhatIfLiveParams(_Params):
    kind = AnalysisKind.WHATIF_LIVE
    failed_cables = Cables(default=list)
    failed_switches = SwitchNames(default=list)
    engine = Choice(ENGINES, required=False, null_is_absent=True)

    def validate(self, attrs: dict) -> dict:
        if not attrs["failed_cables"] and not attrs["failed_switches"] and "engine" not in attrs:
            raise ValidationError({"params": ["fail a cable or a switch, or choose another routing engine"]})
        return attrs


#: The serializer of each analysis kind's parameters.
PARAMS: dict[str, type[_Params]] = {s.kind: s for s in (EbbParams, WhatIfLinksParams, WhatIfEngineParams,
                                                         WhatIfRoceParams, WhatIfLiveParams,
                                                         WhatIfCongestionParams)}


def clean_params(kind: str, params: object, num_links: int) -> dict:
    """The parameters of an analysis of ``kind`` with their defaults filled in.

    ``params``: what the client sent (JSON); ``num_links``: cables of the fabric (``failed_cables`` are
    checked against ``0..num_links - 1``). Raises ValidationError ``{field: [message]}``.

    >>> clean_params("ebb", {"patterns": 50}, 1024)["method"]
    'count'
    """
    if kind not in PARAMS:
        raise ValidationError({"kind": [f"{kind!r} is not one of {', '.join(PARAMS)}"]})
    if not isinstance(params, dict):
        raise ValidationError({"params": ["expected an object"]})
    serializer = PARAMS[kind](data=params, context={"num_links": num_links})
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
