"""Demand per workload and what it asks of an option's GPU."""

import numpy as np
import pytest

from costapp.tco import demand as dm

from .helpers import by_name, document, gpu_figures, plan_of, run, steady


def test_growth_applies_from_the_start_month_and_is_zero_outside_the_active_months():
    f = dm.growth_factor(3, 5, 0.1, 6)
    assert list(f) == pytest.approx([0, 0, 1, 1.1, 1.21, 0])


def test_steady_busy_and_need():
    f = dm.growth_factor(1, 2, 0.0, 2)
    assert list(dm.steady_busy_gpu_hours(24, 0.6, f, 730)) == pytest.approx([10512, 10512])
    assert list(dm.steady_need_gpus(24, f)) == [24, 24]


def test_training_busy_from_flops_and_need_from_the_cluster():
    per_run = dm.training_gpu_hours_per_run(6 * 8e9 * 2000e9, 989.4, 0.4)
    assert per_run == pytest.approx(9.6e22 / (989.4e12 * 0.4 * 3600))
    growth = dm.growth_factor(1, 3, 0.0, 3)
    busy = dm.training_busy_gpu_hours(per_run, 2, growth)
    assert busy[0] == pytest.approx(per_run * 2 / 12)
    need = dm.training_need_gpus(busy, 128, 730, growth > 0)
    assert list(need) == [128, 128, 128]
    assert dm.training_need_gpus(busy, None, 730, growth > 0)[0] == pytest.approx(busy[0] / 730)


def test_inference_busy_and_need():
    f = np.array([1.0])
    assert dm.inference_busy_gpu_hours(40000, 3000, f, 730)[0] == pytest.approx(40000 / 3000 * 730)
    assert dm.inference_need_gpus(40000, 2.5, 3000, f)[0] == pytest.approx(40000 * 2.5 / 3000)


def test_memory_fit_for_training_and_inference():
    assert dm.training_fit_gpus(70, 80) == 16  # 1120 GB / 72 GB = 15.6
    assert dm.inference_fit_gpus(70, 80) == 3  # 168 GB / 80 GB = 2.1
    assert dm.inference_fit_gpus(70, 192) == 1
    assert dm.training_fit_gpus(None, 80) == 0
    assert dm.inference_fit_gpus(100, 240) == 1  # exactly 1: float noise adds no GPU


def test_speed_ratio_falls_back_to_bf16_with_a_warning_when_the_option_lacks_the_precision():
    gpus = gpu_figures()
    workload = {"type": "training", "name": "t", "precision": "fp8"}
    ratio = dm.speed_ratio(
        workload, "h100-sxm", gpus["h100-sxm"], "a100-sxm-80gb", gpus["a100-sxm-80gb"]
    )
    assert ratio.ratio == pytest.approx(1978.9 / 312)
    assert ratio.warning is not None and "bf16" in ratio.warning


def test_speed_ratio_by_workload_type():
    gpus = gpu_figures()
    h100, a100, t4 = gpus["h100-sxm"], gpus["a100-sxm-80gb"], gpus["t4"]
    inference = {"type": "inference", "name": "i"}
    assert dm.speed_ratio(
        inference, "h100-sxm", h100, "a100-sxm-80gb", a100
    ).ratio == pytest.approx(3.35 / 2.039)
    steady_ = {"type": "steady", "name": "s"}
    assert dm.speed_ratio(steady_, "h100-sxm", h100, "t4", t4).ratio == pytest.approx(989.4 / 65)
    assert dm.speed_ratio(steady_, "h100-sxm", h100, "h100-sxm", h100) == dm.SpeedRatio(1.0)


def test_peaks_of_workloads_add_up_and_memory_fit_sets_a_floor():
    doc = document(
        [
            steady(3.2, 0.5),
            {
                "type": "inference",
                "name": "chat",
                "gpu": "h100-sxm",
                "tokens_per_second": 100,
                "tokens_per_second_per_gpu": 1000,
                "params_billion": 70,
                "start_month": 2,
            },
        ],
        [{"type": "cloud", "name": "od", "usd_per_gpu_hour": 1}],
        horizon_months=3,
    )
    plan = plan_of(doc)
    # month 1: ceil(3.2) = 4; months 2-3: 4 + max(ceil(0.1), fit 3) = 7
    assert list(plan.options[0].peak_gpus) == [4, 7, 7]
    assert plan.options[0].busy_gpu_hours[1] == pytest.approx(3.2 * 0.5 * 730 + 0.1 * 730)


def test_throughput_factor_and_gpu_ratio_scale_busy_and_need():
    doc = document(
        [steady(8, 0.5)],
        [
            {
                "type": "cloud",
                "name": "a100",
                "gpu": "a100-sxm-80gb",
                "usd_per_gpu_hour": 1,
                "throughput_factor": 0.9,
            }
        ],
        horizon_months=2,
    )
    option = plan_of(doc).options[0]
    r = 989.4 / 312 / 0.9
    assert option.busy_gpu_hours[0] == pytest.approx(8 * 0.5 * 730 * r)
    assert option.peak_gpus[0] == np.ceil(8 * r)


def test_a_fleet_of_exactly_n_gpus_is_not_rounded_up_by_float_noise():
    doc = document(
        [steady(24, 1.0, monthly_growth=0.1, end_month=1)],
        [
            {
                "type": "cloud",
                "name": "od",
                "usd_per_gpu_hour": 1,
                "throughput_factor": 0.3 / 0.1 / 3,
            }
        ],
        horizon_months=1,
    )
    assert by_name(run(doc))["od"]["provisioned_gpus"] == 24
