"""JSON a client sends, parsed once with limits (issue 26): every request body and websocket message.

Python's ``json`` recurses once per nested array or object, so a body of 3,000 ``[`` raises
``RecursionError`` (a 500, a traceback in the log) before any view sees it; ``object_pairs_hook``
and friends run only after the recursion. :func:`loads` therefore scans the bytes first, in one
vectorized pass (:func:`shape`): bracket depth outside strings, objects and arrays, values. A text
nested deeper than :data:`MAX_DEPTH` levels, or of more values or containers than its bound, is a
:class:`JSONInputError` (a ``ValueError``) naming the byte or the counts; only then is it parsed.

Who uses it: the DRF parser of every JSON body (:class:`ibweb.http.body_limits.JSONParser`), the websocket
consumer's client messages (:mod:`ibweb.live.feed.consumers`) and every JSON field (issue 42): the model field
:class:`JSONModelField` declares the top-level type it holds (``kind``: an object, an array, or any value)
and brings the checked parse and that type to the admin's and every model form (:class:`JSONFormField`) and
to every ``ModelSerializer`` (:class:`JSONField`, which also parses JSON text sent in a multipart or
urlencoded form field). A refused value is a 400 or a form error at its field, never a 500.

>>> loads(b'{"type": "ping"}')
{'type': 'ping'}
>>> loads("[" * 65 + "]" * 65)
Traceback (most recent call last):
...
ibweb.http.json_input.JSONInputError: JSON nested deeper than 64 levels at byte 64
"""

from __future__ import annotations

import json
import math
from typing import NamedTuple

import numpy as np
from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.forms.fields import InvalidJSONInput
from django.utils.deconstruct import deconstructible
from rest_framework import serializers

__all__ = ["MAX_DEPTH", "JSONInputError", "Shape", "shape", "loads", "JSONKind", "JSONModelField", "JSONFormField",
           "JSONField"]

#: Deepest nesting of arrays and objects a client may send. The deepest legitimate body (a fabric's spec,
#: a push sample's counters) is four levels; Python's parser would recurse past its limit near 1,000.
MAX_DEPTH = 64
#: Bytes scanned per numpy pass: bounds the scan's temporaries (a 256 MiB push is scanned in 64 passes).
CHUNK_BYTES = 4 << 20

_QUOTE, _COMMA = ord('"'), ord(",")
_STRUCTURAL = np.zeros(256, dtype=bool)
_STRUCTURAL[list(b'"[]{},')] = True
_STEP = np.zeros(256, dtype=np.int8)
_STEP[list(b"[{")] = 1
_STEP[list(b"]}")] = -1


class JSONInputError(ValueError):
    """JSON a client sent that is refused: too deep, too many values, not UTF-8, or not JSON."""


class Shape(NamedTuple):
    """What :func:`shape` counted: deepest nesting, objects and arrays, values (an upper bound: each
    array element and object member, each container, the document itself)."""

    depth: int
    containers: int
    values: int


def shape(data: bytes, max_depth: int = MAX_DEPTH) -> Shape:
    """Count the nesting, containers and values of the JSON text ``data`` (UTF-8) without parsing it.

    Raises :class:`JSONInputError` at the first bracket deeper than ``max_depth``. Brackets and commas
    inside strings do not count. On text that is not JSON the counts agree with the parser up to the
    first error, which is where it stops: the parser never goes deeper than this scan saw.

    >>> shape(b'{"a": [1, 2, "[,"], "b": {}}')
    Shape(depth=2, containers=3, values=7)
    """
    # An escaped backslash, then an escaped quote, becomes two neutral bytes: every quote left opens or
    # closes a string (left to right, as the parser pairs backslashes). Same length: byte offsets hold.
    clean = data.replace(b"\\\\", b"__").replace(b'\\"', b"__")
    arr = np.frombuffer(clean, dtype=np.uint8)
    depth = deepest = containers = commas = 0
    in_string = 0
    for start in range(0, arr.size, CHUNK_BYTES):
        chunk = arr[start:start + CHUNK_BYTES]
        pos = np.flatnonzero(_STRUCTURAL[chunk])
        if not pos.size:
            continue
        c = chunk[pos]
        quote = c == _QUOTE
        quotes_before = np.cumsum(quote, dtype=np.int64) - quote
        outside = np.flatnonzero((((quotes_before + in_string) & 1) == 0) & ~quote)
        in_string = (in_string + int(quote.sum())) & 1
        if not outside.size:
            continue
        oc = c[outside]
        commas += int(np.count_nonzero(oc == _COMMA))
        steps = _STEP[oc]
        containers += int(np.count_nonzero(steps == 1))
        levels = depth + np.cumsum(steps, dtype=np.int64)
        top = int(levels.max())
        if top > max_depth:
            k = int(np.argmax(levels > max_depth))
            raise JSONInputError(f"JSON nested deeper than {max_depth} levels at byte {start + int(pos[outside[k]])}")
        deepest = max(deepest, top)
        depth = int(levels[-1])
    return Shape(deepest, containers, commas + containers + 1 if arr.size else 0)


def _refuse_constant(name: str):
    raise JSONInputError(f"JSON parse error - {name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # 1e999: no JSON renderer could send it back
        raise JSONInputError(f"JSON parse error - {text[:20]} is out of range")
    return value


def _decode(text: str):
    """The parse itself, once the text's shape passed (apart so tests can see whether it ran)."""
    return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)


def loads(data: str | bytes, *, max_values: int | None = None, max_containers: int | None = None,
          what: str = "JSON"):
    """The value of the JSON text ``data`` a client sent, checked by :func:`shape` before it is parsed.

    Parameters
    ----------
    data : str or bytes
        Bytes must be UTF-8 (RFC 8259); ``NaN``, ``Infinity`` and numbers beyond a float (``1e999``) are
        refused, as DRF's strict parser and renderer do.
    max_values : int, optional
        Most values (default ``settings.IBWEB_MAX_JSON_VALUES``).
    max_containers : int, optional
        Most objects and arrays (default: no bound beyond ``max_values``).
    what : str
        How the messages name the text (``"JSON body"``).

    Raises
    ------
    JSONInputError
        Saying what is wrong and where, never quoting the text.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    found = shape(raw)
    most = settings.IBWEB_MAX_JSON_VALUES if max_values is None else max_values
    if found.values > most:
        raise JSONInputError(f"{what} of {found.values:,} values; at most {most:,} here")
    if max_containers is not None and found.containers > max_containers:
        raise JSONInputError(f"{what} of {found.containers:,} objects and arrays; at most {max_containers:,} here")
    if isinstance(data, str):
        text = data
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONInputError(f"{what} is not UTF-8: byte {exc.start}") from None
    try:
        return _decode(text)
    except JSONInputError:
        raise
    except RecursionError:  # only when the caller's own stack is already deep
        raise JSONInputError(f"{what} nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, an integer of more than 4,300 digits
        raise JSONInputError(f"JSON parse error - {exc}") from None


#: How messages name each top-level type a JSON field may declare (``None``: any JSON value).
KIND_NAMES: dict[type | None, str] = {dict: "an object", list: "an array", None: "any JSON value"}


def _type_name(value) -> str:
    """The JSON name of a parsed value's type: ``an array``, ``a string``..."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else "a string"


@deconstructible
class JSONKind:
    """Validator: the value is of the declared top-level type (``dict`` or ``list``)."""

    def __init__(self, kind: type) -> None:
        if kind not in (dict, list):
            raise ValueError(f"kind must be dict, list or None, not {kind!r}")
        self.kind = kind

    def __call__(self, value) -> None:
        if not isinstance(value, self.kind):
            raise ValidationError(f"expected {KIND_NAMES[self.kind]}, not {_type_name(value)}", code="json_kind")

    def __eq__(self, other) -> bool:
        return isinstance(other, JSONKind) and other.kind is self.kind


class JSONModelField(models.JSONField):
    """A model's JSON field, declaring the top-level type it holds (``kind``: ``dict``, ``list`` or ``None``).

    Its form field is :class:`JSONFormField` and its serializer field :class:`JSONField` (both parse text with
    :func:`loads`); the type is a validator, checked by ``full_clean``, forms and serializers alike. Migrations
    record it as Django's ``JSONField``: the type and the parse are checks, not a column change.
    """

    def __init__(self, *args, kind: type | None, **kwargs) -> None:
        self.kind = kind
        self.default_validators = [JSONKind(kind)] if kind is not None else []
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, _path, args, kwargs = super().deconstruct()
        return name, "django.db.models.JSONField", args, kwargs

    def clone(self) -> JSONModelField:
        _name, _path, args, kwargs = self.deconstruct()
        return type(self)(*args, kind=self.kind, **kwargs)

    def formfield(self, **kwargs):
        empty = None if self.null or self.kind is None else self.kind()
        return super().formfield(**{"form_class": JSONFormField, "kind": self.kind, "empty_value": empty, **kwargs})


class JSONFormField(forms.JSONField):
    """Django's form ``JSONField`` whose text is parsed by :func:`loads`, of the top-level type ``kind``.

    Empty text is ``empty_value`` (a :class:`JSONModelField` that may not be null gives ``kind()``: ``{}`` or
    ``[]``); ``null`` is refused where a type is declared and the empty value is not ``None``.
    """

    def __init__(self, *, kind: type | None = None, empty_value=None, **kwargs) -> None:
        self.kind, self.empty_value = kind, empty_value
        super().__init__(**kwargs)

    def validate(self, value) -> None:
        if self.kind is not None and value is not None:  # before "required": [] is not an object
            JSONKind(self.kind)(value)
        super().validate(value)

    def to_python(self, value):
        if self.disabled:
            return value
        if value is None or (isinstance(value, str) and not value.strip()):
            return self.empty_value
        if not isinstance(value, str) or isinstance(value, forms.fields.JSONString):
            return value
        try:
            converted = loads(value)
        except JSONInputError as exc:
            raise ValidationError(f"Enter valid JSON: {exc}", code="invalid") from None
        if converted is None and self.kind is not None and self.empty_value is not None:
            raise ValidationError(f"expected {KIND_NAMES[self.kind]}, not null", code="json_kind")
        return forms.fields.JSONString(converted) if isinstance(converted, str) else converted

    def bound_data(self, data, initial):
        if self.disabled:
            return initial
        if data is None:
            return None
        try:
            return loads(data)
        except JSONInputError:  # shown back as typed, with the error
            return InvalidJSONInput(data)


class JSONField(serializers.JSONField):
    """DRF's ``JSONField`` whose text (a form field's value, ``binary=True``) is parsed by :func:`loads`, of the
    top-level type ``kind`` (``dict``, ``list`` or ``None``; a model's :class:`JSONModelField` brings its own)."""

    def __init__(self, *, kind: type | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        if kind is not None:
            self.validators.append(JSONKind(kind))

    def to_internal_value(self, data):
        if self.binary or getattr(data, "is_json_string", False):
            try:
                return loads(data)
            except JSONInputError as exc:
                raise serializers.ValidationError(str(exc)) from None
        return super().to_internal_value(data)


# Every ModelSerializer builds a JSONModelField's field with the checked parse (its validators carry the type).
serializers.ModelSerializer.serializer_field_mapping[JSONModelField] = JSONField
