import itertools

from parakit.build.assignments import assignment_pairs
from parakit.schema import Document

ANSWERS = [
    Document(f"q1-{i}", f"Translation {i} of the contract text, version {i}.", {"assignment": "q1"})
    for i in range(5)
] + [
    Document("q2-0", "An essay on corpus linguistics.", {"assignment": "q2"}),
    Document("q2-1", "Corpus linguistics studies language with corpora.", {"assignment": "q2"}),
    Document("q3-0", "Lonely answer.", {"assignment": "q3"}),
]


def test_all_pairs_capped_per_assignment():
    ps = assignment_pairs(ANSWERS, max_pairs=3, seed=1)
    by = {}
    for p in ps:
        by.setdefault(p.group, []).append(p)
    assert len(by["q1"]) == 3 and len(by["q2"]) == 1 and "q3" not in by
    possible = {f"{a.id}|{b.id}" for a, b in itertools.combinations(ANSWERS[:5], 2)}
    assert {p.id for p in by["q1"]} <= possible
    assert ps.metadata["skipped"] == {"over-cap": 7, "single-answer": 1}
    assert len(assignment_pairs(ANSWERS, max_pairs=None)) == 10 + 1
    # seeded
    assert [p.id for p in assignment_pairs(ANSWERS, seed=1)] == [p.id for p in ps]
