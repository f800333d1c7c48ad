# The suite's scenarios (sourced by run_suite.sh and run_load_grid.sh, so that
# both run the same list). synthetic_day_1m, the speed benchmark, is run on
# its own; the FastServe scenarios are run by their commands in
# papers/fastserve.md.
suite_scenarios=(household_evening_50 household_evening_90 household_evening_120
                 azure_conv_4090 azure_code_4090 servegen_multitenant agent_heavy_day
                 agent_batch flood_baseline flood flood_host_tier_baseline flood_host_tier
                 mooncake_prefix_4090 servegen_datasets sharegpt_poisson_4090 burstgpt_4090
                 jsonl_household_4090 vtc_overload household_embedding
                 household_multimodal)
