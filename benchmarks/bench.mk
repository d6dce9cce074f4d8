# Benchmarks (issue 5). Included from the Makefile: `include benchmarks/bench.mk`.
# `make bench` measures speed (1k, 10k and 100k memories, side by side with the floor and the txtai and
# hebbmem peers) and LoCoMo recall, writing benchmarks/results/{perf,locomo}.json and docs/benchmarks.md. LoCoMo is read from
# ../shared/data/locomo10.json beside the repo, or from $HEBBS_LOCOMO_PATH; without it that part is skipped.
# BENCH_ARGS passes options through, e.g. `make bench BENCH_ARGS="--sizes 10000"`.

BENCH_PY ?= .venv/bin/python
BENCH_ARGS ?=

.PHONY: bench-scale bench bench-deps bench-report bench-quick bench-serve bench-analogy bench-analogy-scale bench-locomo \
	bench-analogy-crowded \
	calibrate

bench-deps: setup
	@$(BENCH_PY) -c "import hebbmem, txtai, matplotlib" 2>/dev/null || $(BENCH_PY) -m pip install -q -e '.[bench]'

bench: setup bench-deps
	$(BENCH_PY) -m benchmarks.run $(BENCH_ARGS)

bench-report:
	$(BENCH_PY) -m benchmarks.run --report-only

# A developer's loop (a few minutes): one small store, the ONNX and torch floors side by side, cold start;
# no peers and no LoCoMo. Writes into benchmarks/results/quick/ so the committed figures stay untouched.
QUICK_DIR ?= benchmarks/results/quick
bench-quick: setup
	$(BENCH_PY) -m benchmarks.run --sizes 2000 --queries 60 --skip-locomo --no-peer --cold-runs 3 \
		--results-dir $(QUICK_DIR) --docs-dir $(QUICK_DIR)

# LoCoMo recall quality alone (issue 10; also part of `make bench`): the default ONNX embedder, vectors cached in
# benchmarks/.cache/, writes results/locomo.json and the LoCoMo section of docs/benchmarks.md (the speed section
# is kept from results/perf.json). LOCOMO_ARGS passes options through, e.g. LOCOMO_ARGS="--locomo PATH".
LOCOMO_ARGS ?=
# It runs the ablation table's configs (similarity to recommended) and the fusion grid; `make bench` runs every
# config, the strategy mixes with causal, temporal and analogical included.
bench-locomo: setup
	$(BENCH_PY) -m benchmarks.run --skip-perf --locomo-configs ablation $(LOCOMO_ARGS)

# Refit the fused relevance's calibration on LoCoMo's tuning half -> engine/recall/calibration_fit.py
# (docs/calibration.md); then rerun bench-locomo.
calibrate: setup
	$(BENCH_PY) -m benchmarks.calibrate $(LOCOMO_ARGS)

# What serving costs (REST, gRPC) and what a Chroma server costs, next to the in-process engine: docs/scaling.md.
bench-serve: setup
	$(BENCH_PY) -m benchmarks.bench_serve $(BENCH_ARGS)

# Analogical recall quality: the one-sentence triads (issue 11) -> results/analogy.json, then the story sets with
# their literal / mere-appearance controls and the document case (issue 31) -> results/analogy_stories.json, and
# the second story set -> results/analogy_stories_extra.json, and the third (session 15, a final check only, never
# tuned on) -> results/analogy_stories_new.json, and the fourth (session 21, other domains, styles and causal shapes,
# treated as held out) -> results/analogy_stories_fresh.json, and the fifth (session 25, 24 sets written blind to the
# engine, never tuned on) -> results/analogy_stories_fresh2.json, and the sixth (session 27, 24 sets written blind to the
# engine in varied voices, a TUNE set: read freely) -> results/analogy_stories_tune3.json; then how far tellings of one structure agree (class and
# sign of mapped event pairs, base onto literal retelling and onto true analog, every set file and split; session 22;
# each event's course, and the true analog's rank by agreement alone, session 22's third developer; participant links,
# session 23)
# -> results/analogy_agreement.json.
bench-analogy: setup
	$(BENCH_PY) -m benchmarks.analogy.analogy_eval $(ANALOGY_ARGS)
	$(BENCH_PY) -m benchmarks.analogy.story_eval $(ANALOGY_STORY_ARGS)
	$(BENCH_PY) -m benchmarks.analogy.story_eval --stories benchmarks/analogy/stories_extra.json \
		--out benchmarks/results/analogy_stories_extra.json --no-documents $(ANALOGY_STORY_ARGS)
	$(BENCH_PY) -m benchmarks.analogy.story_eval --stories benchmarks/analogy/stories_new.json \
		--out benchmarks/results/analogy_stories_new.json --no-documents $(ANALOGY_STORY_ARGS)
	$(BENCH_PY) -m benchmarks.analogy.story_eval --stories benchmarks/analogy/stories_fresh.json \
		--out benchmarks/results/analogy_stories_fresh.json --no-documents $(ANALOGY_STORY_ARGS)
	$(BENCH_PY) -m benchmarks.analogy.story_eval --stories benchmarks/analogy/stories_fresh2.json \
		--out benchmarks/results/analogy_stories_fresh2.json --no-documents $(ANALOGY_STORY_ARGS)
	$(BENCH_PY) -m benchmarks.analogy.story_eval --stories benchmarks/analogy/stories_tune3.json \
		--out benchmarks/results/analogy_stories_tune3.json --no-documents $(ANALOGY_STORY_ARGS)
	$(BENCH_PY) -m benchmarks.analogy.agreement --out benchmarks/results/analogy_agreement.json

# Analogical recall's latency over 10k memories against the similarity floor -> results/analogy_scale.json.
bench-analogy-scale: setup
	$(BENCH_PY) -m benchmarks.analogy.scale $(ANALOGY_SCALE_ARGS)

# Story analogs in a crowded store at top_k 10 (session 27): the dev bases with 5,000 synthetic memories beside the
# stories, with and without the plot index -> results/analogy_crowded.json and analogy_crowded_without_plot_index.json.
bench-analogy-crowded: setup
	$(BENCH_PY) -m benchmarks.analogy.crowded --out benchmarks/results/analogy_crowded.json
	$(BENCH_PY) -m benchmarks.analogy.crowded --without-plot-index \
		--out benchmarks/results/analogy_crowded_without_plot_index.json

bench: bench-analogy bench-analogy-scale

# Growth with the store's size (issue 13): 10k -> 100k -> 1M memories from precomputed vectors (a real
# 10k base, perturbed; see benchmarks/scale.py), cues embedded for real -> results/scale.json, then the docs.
# A size projected past SCALE_BUDGET minutes of build (from the previous size's rate) is skipped and said so.
SCALE_SIZES ?= 10000,100000,1000000
SCALE_BUDGET ?= 60
SCALE_ARGS ?=
bench-scale: setup
	$(BENCH_PY) -m benchmarks.scale --sizes $(SCALE_SIZES) --budget-minutes $(SCALE_BUDGET) --save $(SCALE_ARGS)
	$(BENCH_PY) -m benchmarks.run --report-only

# Where all four strategies' time over analogical alone goes (issue 27): the strategies, or fusing and ranking
# their hits -> results/all_four_parts.json. Reads the stores a scale run kept:
#   make bench-scale SCALE_ARGS="--keep-stores --work-dir DIR"; make bench-all-four-parts SCALE_WORK_DIR=DIR
.PHONY: bench-all-four-parts
bench-all-four-parts: setup
	@test -n "$(SCALE_WORK_DIR)" || { echo "set SCALE_WORK_DIR to the --work-dir of a scale run with --keep-stores"; exit 2; }
	$(BENCH_PY) -m benchmarks.all_four_parts --work-dir $(SCALE_WORK_DIR) --sizes $(SCALE_SIZES) --save

# The offline contradiction checks (engine/contradictions/) on the labelled statement pairs, tune and held-out
# halves reported apart: benchmarks/results/contradictions.json, docs/contradictions.md.
.PHONY: bench-contradictions
bench-contradictions: setup
	$(BENCH_PY) -m benchmarks.contradictions.evaluate --json benchmarks/results/contradictions.json
