"""Warnings said for a person: labels for field names, names for GPU slugs, providers and price
files, no format versions; names as typed; grouped by subject, the first three open and the rest folded."""

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


def test_no_file_path_address_or_billing_code_is_left_in_a_warning():
    committed = (
        'Option "Azure, 3 years" uses the commit-3y price of azure Standard_ND96isr_H100_v5 in '
        "eastus as stated by prices/committed/published.csv on 2026-02-04, more than 30 days ago: "
        "it may no longer hold."
    )
    said = warning_in_words(committed)
    assert "the 3-year committed price of azure Standard_ND96isr_H100_v5" in said
    assert "as stated by a published price list on 2026-02-04" in said
    assert ".csv" not in said and "commit-3y" not in said
    fed = warning_in_words(
        "uses the on-demand price of oracle BM.GPU.H100.8 in us-ashburn-1 as stated by "
        "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD on "
        "2026-11-02, more than 30 days ago; the spot price of aws p5.48xlarge as stated by "
        "hardware/data/prices/skypilot-v8/aws.csv and of x as stated by feeds/2026-11/x_y.json."
    )
    assert "as stated by the price feed at apexapps.oracle.com on 2026-11-02" in fed
    assert "the spot price of aws p5.48xlarge as stated by SkyPilot's price catalog for Aws" in fed
    assert "as stated by a price file." in fed
    assert "://" not in fed and ".csv" not in fed and ".json" not in fed
    assert "BM.GPU.H100.8" in fed and "p5.48xlarge" in fed  # instance names stay the seller's
    named = warning_in_words('Option "prices.csv" uses commit-1y prices.')
    assert '"prices.csv"' in named  # a name stays as its owner typed it


def test_a_provider_is_said_by_its_name_where_a_warning_names_it():
    providers = {"lambda": "Lambda", "azure": "Microsoft Azure", "vast": "Vast.ai"}
    stale = warning_in_words(STALE, provider_names=providers)
    assert "uses the on-demand price of Lambda gpu_8x_h100_sxm5 in us-east-1," in stale
    assert "of lambda" not in stale
    unconfirmed = warning_in_words(
        'Option "x" uses azure Standard_ND96isr_H100_v5 in eastus, whose GPU is filed as h100-sxm '
        "but its variant is not confirmed: the name says H100.",
        {"h100-sxm": "H100 SXM"},
        providers,
    )
    assert unconfirmed.startswith('Option "x" uses Microsoft Azure Standard_ND96isr_H100_v5 in ')
    assert "filed as H100 SXM" in unconfirmed
    egress = warning_in_words(
        'Option "vast" sends 2 TB of egress a month through vast, whose egress price is unknown: '
        "a vast amount.",
        provider_names=providers,
    )
    assert "through Vast.ai, whose egress price is unknown: a vast amount." in egress
    assert egress.startswith('Option "vast"')  # a name stays as its owner typed it
    grouped = warnings_grouped([STALE], ["x"], provider_names=providers)
    assert "the on-demand price of Lambda gpu_8x_h100_sxm5" in grouped[0].warnings[0]
    assert "price of lambda" in warning_in_words(STALE)  # no names given: the slug as written
