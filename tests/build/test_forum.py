from parakit.build.align import DocumentAligner
from parakit.build.documents import SkipCounter
from parakit.build.forum import forum_pairs, is_contained
from parakit.schema import Document


def _msg(i, title, sub, text):
    return Document(f"m{i}", text, {"title": title, "subforum": sub})


MESSAGES = [
    _msg(1, "Best budget phone?", "tech", "Which cheap phone has the best camera these days?"),
    _msg(2, "best budget phone? ", "tech", "I need a cheap phone with a good camera, ideas?"),
    _msg(3, "Best budget phone?", "cars", "Which cheap phone has the best camera these days?"),
    _msg(
        4,
        "Best budget phone?",
        "tech",
        "Which cheap phone has the best camera these days? Thanks in advance.",
    ),
    _msg(5, "Sourdough starter", "food", "My sourdough starter smells odd, is it dead?"),
]


def test_same_title_and_subforum_band_and_containment():
    skips = SkipCounter()
    ps = forum_pairs(MESSAGES, DocumentAligner(low=0.0, high=0.999), skips=skips)
    ids = {p.id for p in ps}
    # m3 is another sub-forum; m1 is contained in m4 (dropped)
    assert ids == {"m1|m2", "m2|m4"}
    assert skips["contained"] == 1
    assert all(p.group == "tech/best budget phone?" for p in ps)
    kept = forum_pairs(MESSAGES, DocumentAligner(low=0.0, high=0.999), drop_contained=False)
    assert len(kept) == 3


def test_containment_is_case_and_space_insensitive():
    assert is_contained("Hello  World", "well, hello world again")
    assert not is_contained("hello there", "hello world")
