"""benchmarks/all_four_parts.py's measuring device: all four with the fusion made free ranks what analogical alone
ranks, the fusion and ranking steps are timed only while asked, and the recaller is left as it was."""

from __future__ import annotations

from benchmarks.all_four_parts import ALL_FOUR, Steps
from engine import MemoryEngine, build_request
from engine.recall import recaller

STORIES = [
    "Mia skipped the safety check to finish early, and the bridge model collapsed at the fair.",
    "Tom ignored the weather warning to reach the summit sooner, and the storm trapped him on the ridge.",
    "Ana practised every evening for a month, and she won the piano contest.",
    "The bakery cut its proofing time to open earlier, and the bread came out flat.",
    "Leo checked every rope twice before the climb, and the team reached the top safely.",
    "Sara watered the tomatoes daily, and the harvest was the best in years.",
]


def test_unfused_all_four_ranks_analogicals_hits_and_steps_restore_the_recaller(engine: MemoryEngine) -> None:
    for text in STORIES:
        engine.remember(text, entity_id="story")
    cue = "The students rushed the experiment and skipped the checks, so the results were useless."
    fused, rank = recaller.fused, recaller.rank
    alone = [r.memory.id for r in engine.retrieve(build_request(cue=cue, top_k=3, strategies=["analogical"]))]
    together = build_request(cue=cue, top_k=3, strategies=ALL_FOUR, entity_id="story", max_depth=5)
    steps = Steps(top_k=3)
    try:
        steps.unfused = True
        unfused = [r.memory.id for r in engine.retrieve(together)]
        assert steps.ms == {"fused": [], "rank": []}  # not asked to time
        steps.unfused, steps.on = False, True
        built = engine.retrieve(together)
        assert len(steps.ms["fused"]) == len(steps.ms["rank"]) == 1
        assert all(ms > 0 for ms in steps.ms["fused"] + steps.ms["rank"])
    finally:
        steps.close()
    assert unfused == alone
    assert any(d.strategy.value != "analogical" for r in built for d in r.strategy_details)  # truly fused
    assert (recaller.fused, recaller.rank) == (fused, rank)
