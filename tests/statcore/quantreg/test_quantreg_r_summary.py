"""QuantReg's inference against R quantreg's ``summary.rq`` for every ``se=`` option, with R's
numbers frozen here (the way statsmodels keeps its R results).

Generated once with R 4.x, quantreg 5.94 (Debian ``r-cran-quantreg``), printed with
``sprintf("%.15g")``::

    library(quantreg); data(engel)
    g <- read.csv("statcore/datasets/_files/grunfeld.csv")
    f <- rq(foodexp ~ income, tau = tau, data = engel)            # and
    f <- rq(invest ~ value + capital, tau = tau, data = g)        # tau in .25, .5, .75
    summary(f, se = "iid" | "nid" | "ker")$coefficients           # std. errors, Pr(>|t|)
    summary(f, se = "rank", alpha = 0.1 | 0.05)$coefficients      # lower bd, upper bd
    set.seed(1); summary(rq(..., tau = .5), se = "boot", R = 4000)  # xy-pair bootstrap

R's ``engel`` is the same data as ``statcore.datasets.load("engel")``; Grunfeld is read from
statcore's own file, so both sides fit identical numbers.
"""

import numpy as np
import pytest

import statcore as sc
from statcore.quantreg import QuantReg

# fmt: off
R_ENGEL = {
    0.25: {
        "coef": (95.4835396345529, 0.47410320819331),
        "iid": ((15.8619076503776, 0.0142806983773879), (6.73726430200361e-09, 0)),
        "nid": ((21.3923697518315, 0.0290552734827612), (1.25646612936237e-05, 0)),
        "ker": ((24.1639194918595, 0.0295488223199409), (0.000102987185992554, 0)),
        ("rank", 0.1): ((73.7860765452465, 0.420329815050914), (120.098474541908, 0.494328777476024)),  # noqa: E501
        ("rank", 0.05): ((67.5662859512023, 0.416814898115875), (134.919963830615, 0.51122393651948)),  # noqa: E501
    },
    0.5: {
        "coef": (81.4822474169362, 0.56018055120942),
        "iid": ((13.2390797180804, 0.0119193295292952), (3.25621463126424e-09, 0)),
        "nid": ((19.250660252106, 0.0282772096838577), (3.32287515316665e-05, 0)),
        "ker": ((30.2153158527793, 0.0373170354527435), (0.00751395327790316, 0)),
        ("rank", 0.1): ((53.2591515453943, 0.487022269382608), (114.011557242752, 0.601989042131699)),  # noqa: E501
        ("rank", 0.05): ((47.0904023300428, 0.480330148252508), (135.188393906888, 0.612778649429116)),  # noqa: E501
    },
    0.75: {
        "coef": (62.3965855289644, 0.64401413936869),
        "iid": ((10.6710638049329, 0.00960730871235901), (1.67788558602666e-08, 0)),
        "nid": ((16.3053766028159, 0.0232391681319687), (0.000166839314945211, 0)),
        "ker": ((29.1187560218802, 0.0362160653555735), (0.0331631556841185, 0)),
        ("rank", 0.1): ((32.7448767736562, 0.580155162976758), (107.313621350792, 0.690412733131509)),  # noqa: E501
        ("rank", 0.05): ((27.8317451772876, 0.573887746842946), (120.070881111836, 0.705156095811431)),  # noqa: E501
    },
}
R_ENGEL_BOOT_SE = (27.7003449232452, 0.0355745617039544)
R_GRUNFELD = {
    0.25: {
        "coef": (-4.88601851723419, 0.0743212109874817, 0.0743548244150843),
        "iid": ((1.1036228057242, 0.000723932104216321, 0.0031781375514837), (1.51193949238237e-05, 0, 0)),  # noqa: E501
        "nid": ((0.614515581901253, 0.0103424774788316, 0.0072217334432026), (1.00586206031039e-13, 1.05779829340236e-11, 0)),  # noqa: E501
        "ker": ((4.22745036781887, 0.00654498593577921, 0.0165953959001356), (0.249040566653132, 0, 1.20483781065328e-05)),  # noqa: E501
        ("rank", 0.1): ((-10.7518709258113, 0.050763642152285, 0.0553901136392215), (-3.38929902296556, 0.0802989986839089, 0.0920345327559948)),  # noqa: E501
        ("rank", 0.05): ((-12.009514379084, 0.0444495166984864, 0.0470227265913045), (-3.15915773824878, 0.0847036425893539, 0.0929722186612448)),  # noqa: E501
    },
    0.5: {
        "coef": (-8.30365245211369, 0.11147090844072, 0.112770308609185),
        "iid": ((0.963730274627604, 0.000632168238993865, 0.00277528459851446), (1.33226762955019e-15, 0, 0)),  # noqa: E501
        "nid": ((1.91375827940346, 0.0103704484757394, 0.0206394453140814), (2.19435390169664e-05, 0, 1.27287760998129e-07)),  # noqa: E501
        "ker": ((6.43943408573252, 0.0087566344051097, 0.0312579060154376), (0.198596905581013, 0, 0.00038339925191333)),  # noqa: E501
        ("rank", 0.1): ((-15.3570789132595, 0.103196119670122, 0.0789969066268165), (-6.74085661830264, 0.128483105955018, 0.144391628474427)),  # noqa: E501
        ("rank", 0.05): ((-17.2576832315585, 0.0961561587882853, 0.0748970729361321), (-6.41214693758686, 0.133395815588589, 0.15647830704561)),  # noqa: E501
    },
    0.75: {
        "coef": (-8.72297757396239, 0.146924188123269, 0.1232688175363),
        "iid": ((1.15496943792002, 0.000757613426582207, 0.0033260020746499), (1.17394982623864e-12, 0, 0)),  # noqa: E501
        "nid": ((2.34532840330914, 0.0133584125893697, 0.0147332408602489), (0.000254396089633069, 0, 7.105427357601e-15)),  # noqa: E501
        "ker": ((5.33005050863877, 0.0164473960905775, 0.0359476638984033), (0.103170709947348, 2.22044604925031e-16, 0.000724591850038037)),  # noqa: E501
        ("rank", 0.1): ((-10.1859743605856, 0.125553400585565, 0.100177208820836), (-7.68804798437103, 0.173799154230497, 0.200475775815993)),  # noqa: E501
        ("rank", 0.05): ((-10.3398465727298, 0.123129119806594, 0.0965336847977916), (-7.60344129209009, 0.18304954445087, 0.236508685905472)),  # noqa: E501
    },
}
R_GRUNFELD_BOOT_SE = (3.62982501415644, 0.00973413232681666, 0.0214555151209298)
# fmt: on

OURS = {"iid": "iid", "nid": "nid", "ker": "kernel"}
LEVELS = (0.25, 0.5, 0.75)


@pytest.fixture(scope="module")
def models():
    grunfeld = sc.datasets.load("grunfeld")
    return {
        "engel": QuantReg.from_formula("foodexp ~ income", sc.datasets.load("engel"), q=LEVELS),
        "grunfeld": QuantReg.from_formula("invest ~ value + capital", grunfeld, q=LEVELS),
    }


REFERENCE = {"engel": R_ENGEL, "grunfeld": R_GRUNFELD}


@pytest.mark.parametrize("data", list(REFERENCE))
@pytest.mark.parametrize("se", list(OURS))
def test_standard_errors_and_p_values_match_summary_rq(models, data, se):
    res = models[data].fit(cov_type=OURS[se])
    for tau in LEVELS:
        ref = REFERENCE[data][tau]
        # both sides reach the same LP vertex: equal to R's 15 printed digits up to rounding
        np.testing.assert_allclose(res.params[tau], ref["coef"], rtol=1e-11)
        r_se, r_p = (np.array(v) for v in ref[se])
        # the same formulas on the same vertex (R by QR, ours by an inverse): 1e-9 relative
        # leaves room for the conditioning of X'X only
        np.testing.assert_allclose(res.bse[tau], r_se, rtol=1e-9)
        # R computes 2 (1 - pt(|t|, n - p)): its granularity is 2 ulp(1) = 4.4e-16 absolute, so
        # relative agreement where R's value is far above that, absolute (1e-15) elsewhere
        ours_p = res.pvalues[tau].to_numpy()
        shown = r_p > 1e-10
        np.testing.assert_allclose(ours_p[shown], r_p[shown], rtol=1e-6)
        np.testing.assert_allclose(ours_p[~shown], r_p[~shown], rtol=0, atol=1e-15)


@pytest.mark.parametrize("data", list(REFERENCE))
@pytest.mark.parametrize("alpha", [0.1, 0.05])
def test_rank_inversion_intervals_match_summary_rq(models, data, alpha):
    res = models[data].fit(cov_type="rank")
    ci = res.conf_int(alpha)
    for tau in LEVELS:
        lower, upper = (np.array(v) for v in REFERENCE[data][tau][("rank", alpha)])
        # the same breakpoints and statistics, interpolated the same way: R's digits, up to the
        # rounding of the breakpoint solves
        np.testing.assert_allclose(ci.loc[tau, "lower"], lower, rtol=1e-9)
        np.testing.assert_allclose(ci.loc[tau, "upper"], upper, rtol=1e-9)


def test_default_follows_r_rank_below_1001_rows_else_nid(models, rng):
    engel = models["engel"].fit()
    assert engel.cov_type.startswith("rank") and engel.vcov is None
    assert np.isnan(engel.bse.to_numpy()).all()
    np.testing.assert_allclose(
        engel.conf_int(0.1).loc[0.5, "lower"], R_ENGEL[0.5][("rank", 0.1)][0], rtol=1e-9
    )
    # no covariance: a cross-level wald test says why instead of guessing
    with pytest.warns(Warning, match="intervals, not a covariance"):
        test = engel.wald_test("`income[0.25]` = `income[0.75]`")
    assert np.isnan(test.pvalue)
    with pytest.raises(ValueError, match="`alpha` must be at least 0.001"):
        engel.conf_int(0.0001)
    X = rng.normal(size=(1001, 2))
    big = QuantReg(X[:, 0] + rng.normal(size=1001), X).fit()
    assert big.cov_type.startswith("nid") and big.vcov is not None


def test_rank_statistic_is_the_rank_score_test_of_zero(models):
    res = models["engel"].fit(cov_type="rank")
    ci95 = res.conf_int(0.05)
    stat = res.tvalues
    for tau in LEVELS:
        # every interval excludes 0 here, so each rank-score test rejects at 5%
        assert (ci95.loc[tau, "lower"] > 0).all()
        assert (res.pvalues[tau] < 0.05).all()
    # an interval at level 1 - p(0) reaches to 0: the test and the interval invert each other
    # (up to the linear interpolation between breakpoints, a step of T near the crossing)
    p = float(res.pvalues.loc["Intercept", 0.5])
    assert p < 0.001 or res.conf_int(p).loc[(0.5, "Intercept"), "lower"] == pytest.approx(
        0.0, abs=5.0
    )
    assert np.all(np.isfinite(stat.to_numpy()))


@pytest.mark.parametrize(
    "data,r_se", [("engel", R_ENGEL_BOOT_SE), ("grunfeld", R_GRUNFELD_BOOT_SE)]
)
def test_bootstrap_standard_errors_agree_with_r_in_distribution(data, r_se):
    frame = sc.datasets.load(data)
    formula = {"engel": "foodexp ~ income", "grunfeld": "invest ~ value + capital"}[data]
    res = QuantReg.from_formula(formula, frame, q=0.5).fit(
        cov_type="bootstrap", n_resamples=1000, random_state=7
    )
    # both are xy-pair bootstraps of the same fit: R's with B = 4000 (Monte Carlo sd of an SE
    # ~1.1%), ours with B = 1000 (~2.2%); their ratio has sd ~2.5%: 4 sd is 10%
    np.testing.assert_allclose(res.bse.to_numpy(), r_se, rtol=0.10)
