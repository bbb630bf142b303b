"""The one home of intervals (harness.core.rates): bootstrap over units, and the paired difference."""
import pytest

from harness.core.rates import bootstrap_interval, paired_difference_interval, paired_ratio_difference_interval


def test_bootstrap_rejects_empty_and_bad_levels():
    with pytest.raises(ValueError, match="at least one value"):
        bootstrap_interval([])
    with pytest.raises(ValueError, match="between 0 and 1"):
        bootstrap_interval([1.0], level=1.5)


def test_bootstrap_handles_graded_scores():
    low, high = bootstrap_interval([0.0, 0.5, 1 / 3, 1.0] * 25)
    assert low < (0.5 + 1 / 3 + 1) / 4 < high


def test_paired_difference_sees_a_consistent_small_gain_that_unpaired_intervals_hide():
    # b is a plus 0.05 on every unit; the units themselves vary widely.
    a = [i / 100 for i in range(100)]
    b = [x + 0.05 for x in a]
    low, high = paired_difference_interval(b, a)
    assert low == pytest.approx(0.05) and high == pytest.approx(0.05)
    (alo, ahi), (blo, bhi) = bootstrap_interval(a), bootstrap_interval(b)
    assert blo < ahi  # the separate intervals overlap: unpaired, no difference would be called


def test_paired_difference_straddles_zero_for_noise():
    a = [1.0, 0.0] * 50
    b = [0.0, 1.0] * 50
    low, high = paired_difference_interval(a, b)
    assert low < 0 < high
    with pytest.raises(ValueError, match="equal lengths"):
        paired_difference_interval([1.0], [1.0, 0.0])


def test_paired_ratio_difference_is_the_difference_of_ratios_of_totals_with_an_interval_around_it():
    """Cost per solved task is sum(cost) / sum(solved): a ratio of totals, resampled over the same scenarios."""
    cost_a, solved_a = [10.0] * 40, [1.0, 0.0] * 20  # 20 per solved task
    cost_b, solved_b = [10.0] * 40, [1.0, 0.0, 0.0, 0.0] * 10  # 40 per solved task
    low, high = paired_ratio_difference_interval(cost_a, solved_a, cost_b, solved_b)
    assert low <= -20 <= high
    assert high < 0, "a and b's ratios part on every resample here"
    same_low, same_high = paired_ratio_difference_interval(cost_a, solved_a, cost_a, solved_a)
    assert same_low == same_high == 0.0
    with pytest.raises(ValueError, match="equal lengths"):
        paired_ratio_difference_interval(cost_a, solved_a, cost_b[:3], solved_b[:3])
    with pytest.raises(ValueError, match="solved"):
        paired_ratio_difference_interval([1.0, 2.0], [0.0, 0.0], [1.0, 2.0], [1.0, 1.0])
