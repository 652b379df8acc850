"""Statistical model checking: the query language, the statistics against their formulas and
scipy, estimation on cases whose probability is known analytically, the SPRT, the refusal of
deterministic scenarios, and the command."""

from __future__ import annotations

import json
import math

import ccsim
import numpy as np
import pytest
from ccsim.errors import ScenarioError
from ccsim.experiments import smc
from ccsim.experiments.smc.check import _Plan, _prepare, judge
from ccsim.experiments.smc.vocabulary import Source
from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

# One UDP datagram of 100 B over a link that loses each packet with probability LOSS:
# Pr[<> delivered] = 1 - LOSS exactly.
LOSS = 0.3
ONE_PACKET = f"""
[simulation]
duration = "1s"

[topology]
kind = "explicit"
nodes = [ {{ name = "h1", kind = "host" }}, {{ name = "h2", kind = "host" }} ]
links = [ {{ a = "h1", b = "h2", rate = "10Mbps", delay = "1ms", loss = {LOSS} }} ]

[[flows]]
src = "h1"
dst = "h2"
transport = "udp"
app = {{ kind = "transfer", size = "100B" }}
"""
DELIVERED = "Pr[<=1](<> flows.0.packets_received >= 1)"

# No loss, fixed start: every seed gives the same run.
DETERMINISTIC = ONE_PACKET.replace(f"loss = {LOSS}", "loss = 0")

# A flow whose start is drawn uniformly from [0, 1 s): Pr[start < x] = x.
WINDOW = ONE_PACKET.replace(f"loss = {LOSS}", "loss = 0").replace(
    'size = "100B" }', 'size = "100B" }\nstart = "0s..1s"'
)

# An ideal control loop (no network) next to a randomly started flow.
LOOP = (
    WINDOW
    + """
[[control]]
name = "motor"
"""
)


# --- the query language ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "bound", "path", "comparison"),
    [
        ("Pr[<=30](<> ncs.itae > 8727)", 30.0, "<>", None),
        ("Pr[<=30]([] queue.bottleneck.length < 17)", 30.0, "[]", None),
        ("Pr[<=30](<> ncs.itae > 8727) >= 0.1", 30.0, "<>", (">=", 0.1)),
        ("Pr[<=500ms](<> queue.A->B.len_pkts >= 10 && flow.0.cwnd < 3000) <= 0.25", 0.5, "<>", ("<=", 0.25)),
        ("Pr [ <= 2.5 ] ( [] !(ncs.error > 0.5 or ncs.error < -0.5) )", 2.5, "[]", None),
        ("Pr[<=1e1](<> abs(ncs.motor.error) * 2 + 1 > (3 - 1) / 4)", 10.0, "<>", None),
        ("Pr[<=30](<> `queue.my-router->B.length` > 3 and not jain_index < 0.9)", 30.0, "<>", None),
        ("Pr[<=1](<> queue.bottleneck.sojourn > 5ms)", 1.0, "<>", None),
    ],
)
def test_valid_queries_parse(text: str, bound: float, path: str, comparison) -> None:
    query = smc.parse_query(text)
    assert query.bound_s == pytest.approx(bound)
    assert query.path == path
    assert query.comparison == comparison


def test_the_parse_tree_follows_precedence_and_units() -> None:
    query = smc.parse_query("Pr[<=1](<> a > 1 + 2 * 3 || b < 5ms && !c == 1)")
    assert query.expr == (
        "or",
        ("cmp", ">", ("ref", "a", 12), ("arith", "+", ("num", 1.0), ("arith", "*", ("num", 2.0), ("num", 3.0)))),
        ("and", ("cmp", "<", ("ref", "b", 29), ("num", 0.005)), ("not", ("cmp", "==", ("ref", "c", 41), ("num", 1.0)))),
    )
    assert [name for name, _ in smc.parse_query("Pr[<=1](<> queue.A->B.length > x)").refs] == ["queue.A->B.length", "x"]


@pytest.mark.parametrize(
    ("text", "column", "needle"),
    [
        ("", 1, "empty query"),
        ("Prob[<=30](<> x > 1)", 1, "starts with Pr"),
        ("Pr(<> x > 1)", 3, "'[' after Pr"),
        ("Pr[30](<> x > 1)", 4, "'<='"),
        ("Pr[<=](<> x > 1)", 6, "time bound"),
        ("Pr[<=0](<> x > 1)", 6, "must be positive"),
        ("Pr[<=30 s](<> x > 1)", 9, "']'"),
        ("Pr[<=30kg](<> x > 1)", 8, "unknown unit 'kg'"),
        ("Pr[<=30](x > 1)", 10, "<> (eventually) or []"),
        ("Pr[<=30](<> x > 1", 18, "')' closing the path formula"),
        ("Pr[<=30](<> x)", 13, "expected a condition"),
        ("Pr[<=30](<> x > 1 + (y < 2))", 21, "expected a number or a series, found a condition"),
        ("Pr[<=30](<> x > )", 17, "expected a number, a series name"),
        ("Pr[<=30](<> 1 < x < 3)", 19, "do not chain"),
        ("Pr[<=30](<> x > 1) >= 1.5", 23, "probability is in [0, 1]"),
        ("Pr[<=30](<> x > 1) >= y", 23, "expected a probability"),
        ("Pr[<=30](<> x > 1) 0.5", 20, "unexpected '0.5'"),
        ("Pr[<=30](<> x $ 1)", 15, "unexpected character '$'"),
        ("Pr[<=30](<> `x > 1)", 13, "unclosed backquote"),
        ("Pr[<=30](<> Pr > 1)", 13, "comparing probabilities is not supported"),
    ],
)
def test_malformed_queries_point_at_the_column(text: str, column: int, needle: str) -> None:
    with pytest.raises(smc.QueryError) as info:
        smc.parse_query(text)
    assert info.value.column == column, str(info.value)
    assert needle in info.value.message
    # The caret in the long form sits under that column.
    lines = str(info.value).splitlines()
    assert lines[2].index("^") - 2 == column - 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["", " ", "  ", "\t"]), min_size=40, max_size=40))
def test_whitespace_between_tokens_does_not_change_the_parse(spaces: list[str]) -> None:
    tokens = [
        "Pr",
        "[",
        "<=",
        "30",
        "]",
        "(",
        "<>",
        "ncs.itae",
        ">",
        "8727",
        "&&",
        "(",
        "queue.A->B.length",
        "+",
        "1",
        ")",
        "<",
        "17",
        ")",
        ">=",
        "0.1",
    ]
    # Tokens that would merge (two names or numbers) keep one space between them.
    needs = None
    text = ""
    for i, token in enumerate(tokens):
        gap = spaces[i]
        if i and not gap and (tokens[i - 1][-1].isalnum() and token[0].isalnum()):
            gap = " "
        text += gap + token
    del needs
    reference = smc.parse_query("Pr[<=30](<> ncs.itae > 8727 && (queue.A->B.length + 1) < 17) >= 0.1")
    parsed = smc.parse_query(text)
    assert _without_columns(parsed.expr) == _without_columns(reference.expr)
    assert (parsed.bound_s, parsed.path, parsed.comparison) == (30.0, "<>", (">=", 0.1))
    # Columns still point at the names in the spaced text.
    for name, column in parsed.refs:
        assert text[column - 1 :].startswith(name)


def _without_columns(node):
    if node[0] == "ref":
        return ("ref", node[1])
    return tuple(_without_columns(c) if isinstance(c, tuple) else c for c in node)


def test_unknown_names_point_at_their_column(write_toml) -> None:
    path = write_toml(ONE_PACKET)
    for text, column, needle in [
        ("Pr[<=1](<> flows.7.packets_received >= 1)", 12, "no flow '7'"),
        ("Pr[<=1](<> jain_index > 1 || queue.h9->h2.length > 1)", 30, "no queue 'h9->h2'"),
        ("Pr[<=1](<> ncs.itae > 1)", 12, "no control loop"),
        ("Pr[<=1](<> flow.0.cwnd > 1)", 12, "no congestion window"),
        ("Pr[<=1](<> flows.0.goodput > 1)", 12, "FIELD in"),
    ]:
        with pytest.raises(smc.QueryError) as info:
            smc.check(path, text, runs=1, jobs=1)
        assert info.value.column == column, (text, str(info.value))
        assert needle in info.value.message, info.value.message


# --- statistics -------------------------------------------------------------------------------------


def test_chernoff_hoeffding_count_is_the_uppaal_example_and_the_formula() -> None:
    assert smc.chernoff_runs(0.05, 0.05) == 738  # the example in UPPAAL SMC's documentation
    for eps, alpha in [(0.1, 0.05), (0.01, 0.01), (0.2, 0.3)]:
        n = smc.chernoff_runs(eps, alpha)
        # The smallest n with 2 exp(-2 n eps^2) <= alpha.
        assert 2 * math.exp(-2 * n * eps * eps) <= alpha < 2 * math.exp(-2 * (n - 1) * eps * eps)


def test_clopper_pearson_matches_the_reference_vectors() -> None:
    for x, n, lo, hi in [(0, 10, 0.0, 0.3085), (5, 10, 0.1871, 0.8129), (10, 10, 0.6915, 1.0)]:  # F2
        got = smc.clopper_pearson(x, n, 0.05)
        assert got == pytest.approx((lo, hi), abs=5e-5)


def test_clopper_pearson_matches_scipy_beta_quantiles() -> None:
    from scipy.stats import beta

    rng = np.random.default_rng(4)
    n = rng.integers(1, 5000, size=80)
    x = (rng.random(80) * (n + 1)).astype(int).clip(0, n)
    for alpha in (0.05, 0.01, 0.2):
        lower, upper = smc.clopper_pearson(x, n, alpha)
        with np.errstate(invalid="ignore"):
            ref_lo = np.where(x > 0, beta.ppf(alpha / 2, x, n - x + 1), 0.0)
            ref_hi = np.where(x < n, beta.ppf(1 - alpha / 2, x + 1, n - x), 1.0)
        np.testing.assert_allclose(lower, ref_lo, atol=1e-10)
        np.testing.assert_allclose(upper, ref_hi, atol=1e-10)


def test_sprt_log_ratio_and_thresholds_are_walds() -> None:
    test = smc.Sprt(p0=0.5, delta=0.1, alpha=0.05, beta=0.1)
    for outcome in [True, False, False, True, False]:
        test.add(outcome)
    # 2 successes, 3 failures; p_a = 0.6, p_b = 0.4.
    expected = 2 * math.log(0.4 / 0.6) + 3 * math.log(0.6 / 0.4)
    assert test.log_ratio == pytest.approx(expected)
    assert test.accept_h1 == pytest.approx(math.log(0.9 / 0.05))
    assert test.accept_h0 == pytest.approx(math.log(0.1 / 0.95))
    # Successes alone drive ln Λ down by ln(1.5) each: H0 once it reaches ln(0.1/0.95).
    fresh = smc.Sprt(p0=0.5, delta=0.1, alpha=0.05, beta=0.1)
    needed = math.ceil(math.log(0.1 / 0.95) / math.log(0.4 / 0.6))
    decisions = [fresh.add(True) for _ in range(needed)]
    assert decisions[:-1] == [None] * (needed - 1) and decisions[-1] == "H0"
    with pytest.raises(ValueError, match="indifference region"):
        smc.Sprt(p0=0.02, delta=0.05)


# --- evaluation on a run's results --------------------------------------------------------------------


def _plan(text: str, sources: dict[str, Source], warmup: float = 0.0) -> _Plan:
    query = smc.parse_query(text)
    return _Plan("{}", query.path, query.bound_s, query.expr, sources, warmup)


def test_series_hold_their_sample_and_grids_merge() -> None:
    raw = {
        "traces": {"time_s": [0.0, 1.0, 2.0, 3.0], "q": [0.0, 5.0, 20.0, 3.0]},
        "control_traces": {
            "loop": [0, 0, 0],
            "time_s": [0.5, 1.5, 2.5],
            "error": [1.0, -2.0, 4.0],
            "reference": [1, 1, 1],
            "output": [0, 3, -3],
            "control": [0, 0, 0],
        },
        "flows": [{"goodput_bps": 7.0}],
        "queues": [],
        "control": [],
    }
    q = Source("trace", "q")
    e = Source("control", (0, "error"))
    itae = Source("control", (0, "itae"))
    g = Source("scalar", ("flows", 0, "goodput_bps"))
    assert judge(raw, _plan("Pr[<=3](<> q > 10)", {"q": q})) == (True, 2.0)
    assert judge(raw, _plan("Pr[<=1.9](<> q > 10)", {"q": q})) == (False, None)
    assert judge(raw, _plan("Pr[<=3]([] q < 10)", {"q": q})) == (False, 2.0)
    # On the merged grid 0, .5, 1, 1.5, ...: at 1.5 q holds 5 and e is -2.
    assert judge(raw, _plan("Pr[<=3](<> q == 5 && e < 0)", {"q": q, "e": e})) == (True, 1.5)
    # Before the loop's first sample (t = 0) e is undefined: comparisons are false.
    assert judge(raw, _plan("Pr[<=3]([] e < 100 || q > 100)", {"q": q, "e": e})) == (False, 0.0)
    # Running ITAE sum: 0.5*1, + 1.5*2 = 3.5, + 2.5*4 = 13.5; with a warm-up of 1 s: 3, 13.
    assert judge(raw, _plan("Pr[<=3](<> itae >= 3.5)", {"itae": itae})) == (True, 1.5)
    assert judge(raw, _plan("Pr[<=3](<> itae >= 3.5)", {"itae": itae}, warmup=1.0)) == (True, 2.5)
    # A scalar is a constant, judged at the bound when nothing else is sampled.
    assert judge(raw, _plan("Pr[<=3](<> g * 2 > 13)", {"g": g})) == (True, 3.0)
    assert judge(raw, _plan("Pr[<=3](<> g > 7 || q > 4)", {"g": g, "q": q})) == (True, 1.0)


def test_running_itae_ends_at_the_engines_itae_sum(write_toml) -> None:
    import ccsim

    path = write_toml(LOOP.replace('duration = "1s"', 'duration = "3s"\nwarmup = "0.5s"'))
    result = ccsim.run(path, seed=3)
    itae_sum = float(result.control["itae_sum"].iloc[0])
    query = smc.parse_query(f"Pr[<=3](<> ncs.itae >= {itae_sum * (1 - 1e-9)!r})")
    model = ccsim.load(path)
    _, plan = _prepare(model, query, 3, None)
    raw = result.engine_results()
    holds, when = judge(raw, plan)
    assert holds and when == pytest.approx(float(result.control_traces["time_s"].iloc[-1]))
    below = smc.parse_query(f"Pr[<=3](<> ncs.itae > {itae_sum * (1 + 1e-9)!r})")
    assert judge(raw, _prepare(model, below, 3, None)[1]) == (False, None)


# --- estimation and testing on analytic cases ------------------------------------------------------


def test_estimates_of_a_lossy_link_land_in_their_intervals(write_toml) -> None:
    path = write_toml(ONE_PACKET)
    truth = 1 - LOSS
    checks = 12
    epsilon, alpha = 0.1, 0.05
    inside_cp = inside_ch = 0
    with smc_executor() as ex:
        for seed in range(1, checks + 1):
            r = smc.check(path, DELIVERED, epsilon=epsilon, alpha=alpha, seed=seed, executor=ex)
            assert r.runs == smc.chernoff_runs(epsilon, alpha) == 185
            lo, hi = r.interval
            inside_cp += lo <= truth <= hi
            clo, chi = r.chernoff_interval
            inside_ch += clo <= truth <= chi
    # At 95 % confidence, 12 checks all inside has probability 0.54 per interval; fewer than 10
    # inside would have probability 0.02. The seeds are fixed, so this is reproducible.
    print(f"Clopper-Pearson: {inside_cp}/{checks} inside; Chernoff-Hoeffding: {inside_ch}/{checks}")
    assert inside_cp >= 10 and inside_ch >= 10


def test_a_start_window_gives_its_uniform_probability_and_first_passage(write_toml) -> None:
    path = write_toml(WINDOW)
    r = smc.check(path, "Pr[<=1](<> flows.0.start_s < 0.3)", runs=400, jobs=2)
    lo, hi = r.interval
    assert lo <= 0.3 <= hi, (r.estimate, r.interval)
    assert r.random_elements == ["flows[0].start window (0..1 s)"]
    # 400 runs instead of the Chernoff-Hoeffding count: the half-width is that of 400 runs.
    assert r.epsilon == pytest.approx(math.sqrt(math.log(2 / 0.05) / 800))
    assert abs(r.estimate - 0.3) < r.epsilon
    # The first-passage table is the empirical CDF of the outcomes' times, ending at the estimate.
    table = r.first_passage
    assert table["time_s"].iloc[0] == 0.0 and table["time_s"].iloc[-1] == 1.0
    assert table["probability"].iloc[-1] == pytest.approx(r.estimate)
    assert (np.diff(table["probability"]) >= 0).all()
    assert ((table["lower"] <= table["probability"]) & (table["probability"] <= table["upper"])).all()


def test_first_passage_of_a_series_follows_the_start_time(write_toml) -> None:
    # A 20 Mbit/s CBR flow into a 10 Mbit/s link: from its start on, packets wait in the h1
    # queue, so 'length > 0' first holds at the first 10 ms sample after start + ~1 ms. Oracle:
    # the start time drawn by each run, read back from a plain run with the same seed.
    import ccsim

    text = WINDOW.replace('app = { kind = "transfer", size = "100B" }', 'app = { kind = "cbr", rate = "20Mbps" }')
    path = write_toml(text)
    r = smc.check(path, "Pr[<=1](<> queue.h1->h2.length > 0)", runs=200, jobs=2)
    assert r.estimate > 0.95  # only flows starting in the last ~10 ms can miss
    for _, row in r.outcomes.head(40).iterrows():
        start = float(ccsim.run(path, seed=int(row["seed"])).flows["start_s"].iloc[0])
        if row["satisfied"]:
            assert start < row["time_s"] <= start + 0.012, (start, row["time_s"])
        else:
            assert start > 0.98
    # So the first-passage CDF is that of U(0, 1) to within a sample: Kolmogorov distance.
    table = r.first_passage
    uniform = table["time_s"].clip(0, 1)
    assert float((table["probability"] - uniform).abs().max()) < 0.12


def test_sprt_decides_clear_cases_with_fewer_runs_than_the_estimate(write_toml) -> None:
    path = write_toml(ONE_PACKET)
    fixed = smc.chernoff_runs(0.05, 0.05)
    base = DELIVERED
    with smc_executor() as ex:
        for bound, expect in [(">= 0.5", "H0"), (">= 0.9", "H1"), ("<= 0.5", "H1"), ("<= 0.9", "H0")]:
            r = smc.check(path, f"{base} {bound}", delta=0.05, seed=11, executor=ex)
            print(bound, r.decision, r.runs)
            assert r.decision == expect, (bound, r.decision, r.runs)
            assert r.holds == (expect == "H0")
            assert r.runs < fixed
            # Sequential and consumed in run order: the same seed gives the same run count.
            again = smc.check(path, f"{base} {bound}", delta=0.05, seed=11, executor=ex)
            assert again.runs == r.runs and again.successes == r.successes


def test_undecided_when_the_run_limit_comes_first(write_toml) -> None:
    path = write_toml(ONE_PACKET)
    r = smc.check(path, f"{DELIVERED} >= 0.7", delta=0.01, max_runs=30, jobs=1)
    assert r.decision == "undecided" and r.holds is None and r.runs == 30


def test_a_scenario_without_random_elements_is_refused(write_toml) -> None:
    path = write_toml(DETERMINISTIC)
    with pytest.raises(ScenarioError, match="no random element"):
        smc.check(path, DELIVERED, jobs=1)
    proc = run_cli("smc", str(path), "--query", DELIVERED)
    assert proc.returncode == 2 and "every run would be identical" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_the_same_seed_gives_the_same_outcomes(write_toml) -> None:
    path = write_toml(ONE_PACKET)
    a = smc.check(path, DELIVERED, runs=50, seed=5, jobs=1)
    b = smc.check(path, DELIVERED, runs=50, seed=5, jobs=2)
    c = smc.check(path, DELIVERED, runs=50, seed=6, jobs=2)
    assert a.outcomes.equals(b.outcomes)
    assert not a.outcomes["seed"].equals(c.outcomes["seed"])


# --- the command -------------------------------------------------------------------------------------------


def test_cli_estimates_and_writes_the_first_passage(write_toml, tmp_path) -> None:
    path = write_toml(WINDOW.replace('size = "100B"', 'size = "100kB"'))
    out = tmp_path / "smc"
    proc = run_cli(
        "smc",
        str(path),
        "--query",
        "Pr[<=1](<> queue.h1->h2.length > 0)",
        "--epsilon",
        "0.1",
        "--jobs",
        "2",
        "--out",
        str(out),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    assert "185 runs" in proc.stdout and "Clopper-Pearson" in proc.stdout
    summary = json.loads((out / "smc.json").read_text())
    assert summary["runs"] == 185 and summary["mode"] == "estimate"
    assert "wall_time_s" not in summary and json.loads((out / "timing.json").read_text())["wall_time_s"] > 0
    for name in ("outcomes.parquet", "first_passage.csv", "first_passage.png"):
        assert (out / name).stat().st_size > 0
    # The same query and seed again, on one process: the result files are byte-identical.
    again = tmp_path / "again"
    proc = run_cli(
        "smc",
        str(path),
        "--query",
        "Pr[<=1](<> queue.h1->h2.length > 0)",
        "--epsilon",
        "0.1",
        "--jobs",
        "1",
        "--out",
        str(again),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("smc.json", "outcomes.parquet", "first_passage.csv"):
        assert (out / name).read_bytes() == (again / name).read_bytes(), name


def test_cli_tests_a_bound_and_rejects_bad_queries(write_toml) -> None:
    path = write_toml(ONE_PACKET)
    proc = run_cli("smc", str(path), "-q", f"{DELIVERED} >= 0.5", "--delta", "0.05", "--jobs", "1", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "holds: Pr >= 0.5" in proc.stdout
    proc = run_cli("smc", str(path), "-q", "Pr[<=1](<> flows.0.packets_received >=)")
    assert proc.returncode == 2 and "column 39" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    proc = run_cli("smc", str(path), "-q", DELIVERED, "--test")
    assert proc.returncode == 2 and "probability bound" in proc.stderr
    proc = run_cli("smc", str(path), "--vocabulary")
    assert proc.returncode == 0 and "queue.h1->h2.length" in proc.stdout and "flows.F.goodput_bps" in proc.stdout


def smc_executor():
    from ccsim.engine.executor import Executor

    return Executor(jobs=2)


def test_poisson_arrivals_count_as_a_random_element() -> None:
    """A scenario whose only randomness is a Poisson source is accepted, and its runs differ."""
    from ccsim.experiments.smc import random_elements

    scenario = ccsim.from_dict(
        {
            "simulation": {"duration": "1s"},
            "topology": {
                "kind": "dumbbell",
                "bottleneck": {"rate": "10Mbps", "delay": "1ms"},
                "access": {"rate": "100Mbps"},
                "pairs": [{"delay": "1ms"}],
            },
            "flows": [{"pair": 0, "transport": "udp", "app": {"kind": "poisson", "rate": "5Mbps"}}],
        }
    )
    assert random_elements(scenario) == ["flows[0].app poisson (random arrivals)"]
    a, b = ccsim.run(scenario, seed=1), ccsim.run(scenario, seed=2)
    assert a.flows.packets_sent[0] != b.flows.packets_sent[0]
