"""Hidden names relabelled in free texts, whatever punctuation stands around them (issue 24)."""

from hypothesis import given
from hypothesis import strategies as st

from ibweb.access import relabel as access_relabel
from ibweb.access.relabel import names_pattern, relabel

#: Every punctuation a message puts next to a name: sentence ends, arrows, brackets, quotes, lists, paths.
PUNCTUATION = " .,;:!?()[]{}<>'\"`/\\|=+*&^%$#@~-\n\t"
#: Host names as node descriptions give them: letters, digits, and inner '-', '.' or '_'.
NAMES = st.from_regex(r"[a-z][a-z0-9]{0,6}([-._][a-z0-9]{1,4}){0,2}", fullmatch=True)
AROUND = st.text(alphabet=PUNCTUATION, max_size=4)


def label(name: str) -> dict[str, str]:
    return {name: "host-7"}


@given(name=NAMES, before=AROUND, after=AROUND)
def test_a_name_between_any_punctuation_is_replaced(name, before, after):
    text = f"{before}{name}{after}"
    assert relabel(text, label(name)) == f"{before}host-7{after}"


@given(name=NAMES, before=AROUND, after=AROUND)
def test_every_relabelling_path_agrees(name, before, after):
    text = f"path {before}{name}{after} then {name}."
    expected = f"path {before}host-7{after} then host-7."
    assert relabel(text, label(name)) == expected
    assert access_relabel(text, label(name)) == expected
    assert relabel(text, label(name), names_pattern([name])) == expected  # events keep one pattern per view


@given(name=NAMES, suffix=st.from_regex(r"[-.][a-z0-9]{1,3}|_[a-z0-9]{0,3}|[a-z0-9]", fullmatch=True))
def test_a_longer_name_that_starts_with_it_is_another_host(name, suffix):
    other = f"{name}{suffix}"
    assert relabel(f"next to {other}.", label(name)) == f"next to {other}."
    assert relabel(f"next to x{name}.", label(name)) == f"next to x{name}."


def test_the_examples_of_the_issue():
    assert relabel("failed switch next to gpu001.", label("gpu001")) == "failed switch next to host-7."
    assert relabel("path gpu001->leaf01", label("gpu001")) == "path host-7->leaf01"
    assert relabel("gpu001.cluster and dgx-01 (gpu001)", {"gpu001": "h1", "dgx-01": "h2"}) == \
        "gpu001.cluster and h2 (h1)"


def test_the_longest_name_wins():
    labels = {"dgx01": "h1", "dgx01-ib": "h2"}
    assert relabel("dgx01-ib, dgx01.", labels) == "h2, h1."
