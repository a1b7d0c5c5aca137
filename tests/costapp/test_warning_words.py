"""Warnings said for a person: labels for field names, names for GPU slugs and price files, no
format versions; names as typed; grouped by subject, the first three open and the rest folded."""

from costapp.reports.warning_words import warning_in_words, warnings_grouped, warnings_split

ESTIMATE = (
    'Workload "chat_v2 on h100-sxm": tokens_per_second_per_gpu was estimated at 765.7 tokens/s '
    "(70B parameters on h100-sxm, bandwidth-bound decoding at 32 concurrent sequences); give it "
    "to use a measured figure."
)
REPLICAS = (
    'Workload "chat_v2 on h100-sxm": min_replicas is not given, so its figures count one resident '
    'replica held in every active month (version 1.2); set "min_replicas": 0 for the version 1.1 '
    "figure."
)
STALE = (
    'Option "Lambda gpu_8x_h100_sxm5" uses the on-demand price of lambda gpu_8x_h100_sxm5 in '
    "us-east-1, as stated by skypilot-v8/lambda.csv on 2025-01-02, more than 180 days ago: it may "
    "no longer hold."
)


def test_fields_gpus_and_files_in_words_names_as_typed():
    said = warning_in_words(ESTIMATE, {"h100-sxm": "H100 SXM"})
    assert "tokens_per_second_per_gpu" not in said and "Tokens per second per GPU" not in said
    assert "tokens per second per GPU was estimated" in said
    assert "70B parameters on H100 SXM" in said
    assert '"chat_v2 on h100-sxm"' in said  # the workload's name stays as its owner typed it
    replicas = warning_in_words(REPLICAS)
    assert "version" not in replicas and "min_replicas" not in replicas
    assert "set min replicas to 0 to count none" in replicas
    stale = warning_in_words(STALE)
    assert "skypilot-v8/lambda.csv" not in stale
    assert "SkyPilot's price catalog for Lambda on 2025-01-02" in stale
    assert "gpu_8x_h100_sxm5" in stale  # an instance name is the seller's, not a field


def test_grouped_by_subject_then_the_first_three_open():
    infeasible = (
        "One server: 12 GPU-hours of work are not done (shortfall): this option is infeasible."
    )
    groups = warnings_grouped(
        [ESTIMATE, STALE, REPLICAS, infeasible, "The horizon is short."], ["One server", "x"]
    )
    assert [g.subject for g in groups] == [
        "Workload “chat_v2 on h100-sxm”",
        "Option “Lambda gpu_8x_h100_sxm5”",
        "Option “One server”",
        "The scenario",
    ]
    assert groups[0].warnings[0].startswith("Tokens per second per GPU was estimated")
    assert groups[2].warnings == [
        "12 GPU-hours of work are not done (shortfall): this option is infeasible."
    ]
    shown, folded = warnings_split(groups)
    assert sum(len(g.warnings) for g in shown) == 3
    assert sum(len(g.warnings) for g in folded) == 2
    assert [g.subject for g in shown] == [groups[0].subject, groups[1].subject]
    assert folded[0].subject == "Option “One server”"
