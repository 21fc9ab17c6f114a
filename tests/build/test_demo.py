from parakit.cli.demo.build import demo_step
from parakit.io import read
from parakit.schema import Pair, PairSet


def test_demo_step_writes_sample_and_negatives(tmp_path):
    pairs = PairSet(
        [Pair(f"p{i}", f"the cat {i} sat on the mat", f"a dog {i} sat on a mat") for i in range(20)]
    )
    section = demo_step(tmp_path, pairs)
    assert section.startswith("## Corpus construction")
    sample = read(tmp_path / "build-sample.jsonl")
    assert 0 < len(sample) <= 3 * 11
    negatives = read(tmp_path / "build-negatives.jsonl")
    known = {frozenset((p.text1, p.text2)) for p in pairs}
    assert all(frozenset((p.text1, p.text2)) not in known for p in negatives)
