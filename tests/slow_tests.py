"""The default run's heavy end-to-end tests, run by CI after it (`scripts/test.sh`: `-m slow`).

The default run (`-m "not slow and not stress"`) stays under 10 minutes on a 2-core machine; CI then
runs these, so nothing loses coverage. Each is a whole run, campaign, Ray cluster, terminal or kill
of about ten seconds or more (measured: `--durations 0` of the default run), whose subject a shorter
test of the default run also reaches: a family parametrized over providers (or odd WAVs) keeps one
there. `conftest.py` marks these `slow`; `test_slow_tests.py` checks every entry still names a test.
The README's lines that run a protocol fake are marked in `test_readme_usage.py` (`heavy`).
"""

SLOW: frozenset[str] = frozenset({
    # test_app_flows.py
    "tests/test_app_flows.py::test_live_run_fills_table_meters_log_and_is_stored",
    "tests/test_app_flows.py::test_new_run_against_a_provider_fake_from_the_dialog",
    "tests/test_app_flows.py::test_quit_mid_run_keeps_it_as_interrupted",
    "tests/test_app_flows.py::test_runs_list_opens_a_stored_run_finished_and_steps_only_on_request",
    # test_app_new_run.py
    "tests/test_app_new_run.py::test_a_cascade_typed_in_the_model_field_is_checked_as_the_cli_does_and_runs",
    # test_app_run_pool.py
    "tests/test_app_run_pool.py::test_a_killed_worker_fails_its_run_with_the_reason_and_a_fresh_one_takes_the_next",
    "tests/test_app_run_pool.py::test_stopping_one_pooled_run_leaves_the_worker_serving_the_next",
    # test_app_waiting.py
    "tests/test_app_waiting.py::test_a_no_response_turn_shows_the_wait_counts_down_and_the_meters_fall",
    # test_bad_input.py: odd WAVs a whole run accepts (odd_8khz_wav stays in the default run)
    "tests/test_bad_input.py::test_case[odd_stereo_wav]",
    "tests/test_bad_input.py::test_case[odd_float_48k_wav]",
    "tests/test_bad_input.py::test_case[odd_shuffled_lines]",
    # test_benchmarks_import.py
    "tests/test_benchmarks_import.py::test_original_layout_imports_and_runs_every_turn_against_the_simulator",
    # test_campaign.py
    "tests/test_campaign.py::test_small_campaign_local_then_resume",
    # test_campaign_admission.py
    "tests/test_campaign_admission.py::test_a_rerun_from_scratch_runs_at_the_speed_its_notice_says",
    "tests/test_campaign_admission.py::test_a_run_that_lost_pace_on_a_worker_too_busy_for_its_speed_is_rerun_afresh_slower",
    "tests/test_campaign_admission.py::test_a_worker_held_late_is_given_fewer_runs_then_slower_ones",
    # test_campaign_coordinator_death.py
    "tests/test_campaign_coordinator_death.py::test_killed_campaign_takes_its_workers_and_show_list_say_interrupted",
    "tests/test_campaign_coordinator_death.py::test_sigterm_ends_a_campaign_with_143_and_no_child_left",
    # test_campaign_executors.py
    "tests/test_campaign_executors.py::test_local_pool_runs_into_one_store",
    "tests/test_campaign_executors.py::test_local_worker_killed_mid_run",
    "tests/test_campaign_executors.py::test_ray_admission_gives_a_worker_held_late_fewer_runs_then_slower_ones",
    "tests/test_campaign_executors.py::test_ray_campaign_reuses_a_running_local_cluster_and_leaves_it_running",
    "tests/test_campaign_executors.py::test_ray_campaign_starts_its_own_cluster_past_a_stale_address_file_and_leaves_nothing",
    "tests/test_campaign_executors.py::test_ray_runs_into_one_store",
    "tests/test_campaign_executors.py::test_ray_worker_killed_mid_run",
    "tests/test_campaign_executors.py::test_ray_tasks_end_when_their_coordinator_is_killed",
    # test_campaign_provider_caps.py
    "tests/test_campaign_provider_caps.py::test_a_ray_campaign_on_two_nodes_capped_at_2_never_holds_more_than_2_sessions_at_the_fake",
    # test_campaign_progress.py
    "tests/test_campaign_progress.py::test_a_campaign_of_long_turns_says_where_it_is_at_least_every_period",
    # test_cascade.py
    "tests/test_cascade.py::test_a_rotated_cascade_session_is_seeded_and_asks_nothing",
    "tests/test_cascade.py::test_a_stored_cascade_run_shows_its_stages_and_what_the_stt_heard",
    "tests/test_cascade.py::test_deepgram_claude_cartesia",
    "tests/test_cascade.py::test_demo_bench_end_to_end_openai_stt_llm_tts",
    "tests/test_cascade.py::test_openai_stt_llm_elevenlabs",
    # test_causes.py
    "tests/test_causes.py::test_every_failed_turn_of_a_run_with_every_fault_has_a_cause",
    # test_cli_live.py
    "tests/test_cli_live.py::test_campaign_run_prints_no_pipecat_line",
    # test_cli_refusals.py
    "tests/test_cli_refusals.py::test_a_gemini_fake_run_leaves_nothing_in_tmpdir",
    # test_duplex_engine.py
    "tests/test_duplex_engine.py::test_yield_latency_matches_what_the_simulator_did_within_20_ms",
    # test_duplex_fakes.py
    "tests/test_duplex_fakes.py::test_a_fake_talks_through_a_backchannel_yields_to_an_interruption_and_the_engine_measures_it[gemini-3.1-flash]",
    "tests/test_duplex_fakes.py::test_a_fake_talks_through_a_backchannel_yields_to_an_interruption_and_the_engine_measures_it[grok]",
    "tests/test_duplex_fakes.py::test_a_fake_talks_through_a_backchannel_yields_to_an_interruption_and_the_engine_measures_it[nova-sonic]",
    "tests/test_duplex_fakes.py::test_a_fake_talks_through_a_backchannel_yields_to_an_interruption_and_the_engine_measures_it[ultravox]",
    "tests/test_duplex_fakes.py::test_a_fake_talks_through_a_backchannel_yields_to_an_interruption_and_the_engine_measures_it[azure-voice-live]",
    "tests/test_duplex_fakes.py::test_a_fake_talks_through_a_backchannel_yields_to_an_interruption_and_the_engine_measures_it[inworld-realtime]",
    "tests/test_duplex_fakes.py::test_a_fake_talks_through_a_backchannel_yields_to_an_interruption_and_the_engine_measures_it[vertex-gemini-live]",
    "tests/test_duplex_fakes.py::test_a_fake_talks_through_a_backchannel_yields_to_an_interruption_and_the_engine_measures_it[gpt-live-1]",
    "tests/test_duplex_fakes.py::test_a_fake_talks_through_a_backchannel_yields_to_an_interruption_and_the_engine_measures_it[glm]",
    # test_e2e_tmux.py
    "tests/test_e2e_tmux.py::test_demo_runs_in_a_terminal_and_quits_cleanly",
    "tests/test_e2e_tmux.py::test_quit_with_a_run_streaming_asks_first_then_says_how_to_resume_it",
    "tests/test_e2e_tmux.py::test_run_opens_the_monitor_on_the_live_run_and_scores_fill_in",
    # test_engine.py
    "tests/test_engine.py::test_all_75_turns_recorded_with_tool_payloads_checked_at_the_wire",
    "tests/test_engine.py::test_barge_in_is_an_overlap",
    "tests/test_engine.py::test_measured_latencies_match_simulator_truth_at_1x",
    "tests/test_engine.py::test_no_response_retries_then_sentinel[True]",
    # test_engine_cli.py
    "tests/test_engine_cli.py::test_real_provider_path_keeps_the_key_out_of_store_and_logs",
    # test_infra_failures.py
    "tests/test_infra_failures.py::test_cascade_whose_llm_fails_is_infra_error",
    "tests/test_infra_failures.py::test_cli_headless_run_against_nothing_says_the_reason_once",
    # test_judge_whole_run.py
    "tests/test_judge_whole_run.py::test_the_demo_turn_that_got_no_answer_does_not_pass_instruction_following",
    # test_cost_fakes.py: each family keeps the simulator, gpt-realtime-2.1, the text models and one cascade in the default run
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[azure-gpt-realtime]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[azure-voice-live]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[gemini-3.1-flash]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[gemini-native-audio]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[glm]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[gpt-4o-mini-realtime]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[gpt-live-1]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[gpt-live-1+gpt-4.1-mini]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[grok]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[inworld]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[nova-2-sonic]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[nova-sonic]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[ultravox]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[vertex-gemini-live]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[cascade:deepgram+claude-haiku-4-5+cartesia]",
    "tests/test_cost_fakes.py::test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent[cascade:openai-stt+gpt-4.1-mini+elevenlabs]",
    "tests/test_cost_fakes.py::test_the_usage_recorded_is_the_usage_the_fake_sent[gemini-native-audio]",
    "tests/test_cost_fakes.py::test_the_usage_recorded_is_the_usage_the_fake_sent[nova-sonic]",
    "tests/test_cost_fakes.py::test_the_usage_recorded_is_the_usage_the_fake_sent[vertex-gemini-live]",
    "tests/test_cost_fakes.py::test_the_usage_recorded_is_the_usage_the_fake_sent[azure-gpt-realtime]",
    "tests/test_cost_fakes.py::test_the_usage_recorded_is_the_usage_the_fake_sent[azure-voice-live]",
    "tests/test_cost_fakes.py::test_the_usage_recorded_is_the_usage_the_fake_sent[inworld]",
    "tests/test_cost_fakes.py::test_the_usage_recorded_is_the_usage_the_fake_sent[gpt-live-1]",
    # test_gap_known.py (the statistics' own calibration is tests/test_gap*.py and scripts.bench_gap)
    "tests/test_gap_known.py::test_the_interval_covers_a_known_difference_of_seeded_faults",
    # test_app_flows.py, test_engine.py (more)
    "tests/test_app_flows.py::test_turn_detail_play_without_device_exports_wav",
    "tests/test_engine.py::test_session_expiry_rotates",
    # test_provider_contract.py (the simulator, gpt-4o-mini-realtime, the text models and one cascade stay in the default run)
    "tests/test_provider_contract.py::test_every_fake_makes_every_expected_call_of_a_turn[azure-gpt-realtime]",
    "tests/test_provider_contract.py::test_every_fake_makes_every_expected_call_of_a_turn[azure-voice-live]",
    "tests/test_provider_contract.py::test_every_fake_makes_every_expected_call_of_a_turn[gemini-3.1-flash]",
    "tests/test_provider_contract.py::test_every_fake_makes_every_expected_call_of_a_turn[glm]",
    "tests/test_provider_contract.py::test_every_fake_makes_every_expected_call_of_a_turn[gpt-live-1]",
    "tests/test_provider_contract.py::test_every_fake_makes_every_expected_call_of_a_turn[grok]",
    "tests/test_provider_contract.py::test_every_fake_makes_every_expected_call_of_a_turn[inworld]",
    "tests/test_provider_contract.py::test_every_fake_makes_every_expected_call_of_a_turn[nova-2-sonic]",
    "tests/test_provider_contract.py::test_every_fake_makes_every_expected_call_of_a_turn[ultravox]",
    "tests/test_provider_contract.py::test_every_fake_makes_every_expected_call_of_a_turn[vertex-gemini-live]",
    "tests/test_provider_contract.py::test_every_fake_makes_every_expected_call_of_a_turn[cascade:deepgram+claude-haiku-4-5+cartesia]",
    "tests/test_provider_contract.py::test_every_fake_makes_every_expected_call_of_a_turn[cascade:openai-stt+gpt-4.1-mini+elevenlabs]",
    "tests/test_provider_contract.py::test_a_rotated_session_gets_the_history_and_is_asked_nothing[azure-gpt-realtime]",
    "tests/test_provider_contract.py::test_a_rotated_session_gets_the_history_and_is_asked_nothing[azure-voice-live]",
    "tests/test_provider_contract.py::test_a_rotated_session_gets_the_history_and_is_asked_nothing[gemini-3.1-flash]",
    "tests/test_provider_contract.py::test_a_rotated_session_gets_the_history_and_is_asked_nothing[gemini-native-audio]",
    "tests/test_provider_contract.py::test_a_rotated_session_gets_the_history_and_is_asked_nothing[glm]",
    "tests/test_provider_contract.py::test_a_rotated_session_gets_the_history_and_is_asked_nothing[gpt-4o-mini-realtime]",
    "tests/test_provider_contract.py::test_a_rotated_session_gets_the_history_and_is_asked_nothing[grok]",
    "tests/test_provider_contract.py::test_a_rotated_session_gets_the_history_and_is_asked_nothing[inworld]",
    "tests/test_provider_contract.py::test_a_rotated_session_gets_the_history_and_is_asked_nothing[nova-2-sonic]",
    "tests/test_provider_contract.py::test_a_rotated_session_gets_the_history_and_is_asked_nothing[ultravox]",
    "tests/test_provider_contract.py::test_a_rotated_session_gets_the_history_and_is_asked_nothing[vertex-gemini-live]",
    "tests/test_provider_contract.py::test_a_rotated_session_gets_the_history_and_is_asked_nothing[gpt-live-1]",
    # test_provider_gemini.py
    "tests/test_provider_gemini.py::test_base_url_path_keeps_the_key_on_the_wire_only",
    "tests/test_provider_gemini.py::test_tool_stall_is_nudged_and_control_token_reply_is_retried",
    "tests/test_provider_gemini.py::test_go_away_resumes_with_handle_and_the_run_goes_on",
    "tests/test_provider_gemini.py::test_cli_run_fake_records_the_turns",
    "tests/test_provider_gemini.py::test_tool_turns_and_engine_rotation_replay_history_with_tool_state",
    # test_provider_glm.py
    "tests/test_provider_glm.py::test_cli_run_against_the_fake",
    "tests/test_provider_glm.py::test_real_service_path_sends_the_key_on_the_wire_only",
    "tests/test_provider_glm.py::test_rotation_replays_history_with_tool_state_and_text_only_turn_is_flagged",
    "tests/test_provider_glm.py::test_service_reconnect_is_reported_with_what_it_replayed_within_the_budget",
    # test_provider_grok.py
    "tests/test_provider_grok.py::test_cli_run_fake_headless",
    "tests/test_provider_grok.py::test_real_service_path_sends_the_key_only_on_the_wire",
    "tests/test_provider_grok.py::test_server_close_mid_run_is_a_dead_session_rotated_and_the_turn_retried",
    "tests/test_provider_grok.py::test_tool_call_then_age_rotation_replays_history_items_into_the_new_session",
    # test_provider_nova.py
    "tests/test_provider_nova.py::test_cli_run_with_the_fake",
    "tests/test_provider_nova.py::test_rotation_replays_tool_state_as_text_and_input_is_16k",
    "tests/test_provider_nova.py::test_stream_ended_by_aws_rotates_through_the_engine_with_tool_history",
    # test_provider_openai_live.py (the demo turns, client delegation and refusals stay in the default run)
    "tests/test_provider_openai_live.py::test_an_early_start_is_measured_before_the_user_finished",
    "tests/test_provider_openai_live.py::test_conversation_bench_against_the_fake_is_judged_like_any_run",
    "tests/test_provider_openai_live.py::test_duplex_bench_gives_the_duplex_figures",
    # test_provider_real_timing.py
    "tests/test_provider_real_timing.py::test_each_reply_stays_with_its_turn_and_nothing_is_re_sent[gemini-native-audio]",
    "tests/test_provider_real_timing.py::test_each_reply_stays_with_its_turn_and_nothing_is_re_sent[gpt-realtime]",
    "tests/test_provider_real_timing.py::test_each_reply_stays_with_its_turn_and_nothing_is_re_sent[grok-realtime]",
    "tests/test_provider_real_timing.py::test_each_reply_stays_with_its_turn_and_nothing_is_re_sent[ultravox]",
    "tests/test_provider_real_timing.py::test_each_reply_stays_with_its_turn_and_nothing_is_re_sent[glm-realtime-flash]",
    "tests/test_provider_real_timing.py::test_the_fake_sends_on_its_real_timing_profile[gemini-native-audio]",
    "tests/test_provider_real_timing.py::test_the_fake_sends_on_its_real_timing_profile[glm-realtime-flash]",
    "tests/test_provider_real_timing.py::test_the_fake_sends_on_its_real_timing_profile[gpt-realtime]",
    "tests/test_provider_real_timing.py::test_the_fake_sends_on_its_real_timing_profile[grok-realtime]",
    "tests/test_provider_real_timing.py::test_the_fake_sends_on_its_real_timing_profile[ultravox]",
    "tests/test_provider_real_timing.py::test_each_reply_stays_with_its_turn_and_nothing_is_re_sent[azure-gpt-realtime]",
    "tests/test_provider_real_timing.py::test_the_fake_sends_on_its_real_timing_profile[azure-gpt-realtime]",
    "tests/test_provider_real_timing.py::test_each_reply_stays_with_its_turn_and_nothing_is_re_sent[azure-voice-live]",
    "tests/test_provider_real_timing.py::test_the_fake_sends_on_its_real_timing_profile[azure-voice-live]",
    "tests/test_provider_real_timing.py::test_each_reply_stays_with_its_turn_and_nothing_is_re_sent[inworld-realtime]",
    "tests/test_provider_real_timing.py::test_the_fake_sends_on_its_real_timing_profile[inworld-realtime]",
    "tests/test_provider_real_timing.py::test_each_reply_stays_with_its_turn_and_nothing_is_re_sent[vertex-gemini-live]",
    "tests/test_provider_real_timing.py::test_the_fake_sends_on_its_real_timing_profile[vertex-gemini-live]",
    # test_provider_real_timing_scenarios.py
    "tests/test_provider_real_timing_scenarios.py::test_a_turn_that_gets_no_output_is_asked_again_in_a_fresh_session[nova-sonic]",
    "tests/test_provider_real_timing_scenarios.py::test_a_turn_that_gets_no_output_is_asked_again_in_a_fresh_session[vertex-gemini-live]",
    "tests/test_provider_real_timing_scenarios.py::test_a_turn_that_gets_no_output_is_asked_again_in_a_fresh_session[gemini-native-audio]",
    "tests/test_provider_real_timing_scenarios.py::test_a_turn_that_gets_no_output_is_asked_again_in_a_fresh_session[azure-gpt-realtime]",
    "tests/test_provider_real_timing_scenarios.py::test_a_turn_that_gets_no_output_is_asked_again_in_a_fresh_session[glm-realtime-flash]",
    "tests/test_provider_real_timing_scenarios.py::test_a_turn_that_gets_no_output_is_asked_again_in_a_fresh_session[azure-voice-live]",
    "tests/test_provider_real_timing_scenarios.py::test_a_turn_that_gets_no_output_is_asked_again_in_a_fresh_session[inworld-realtime]",
    "tests/test_provider_real_timing_scenarios.py::test_a_turn_that_gets_no_output_is_asked_again_in_a_fresh_session[ultravox]",
    "tests/test_provider_real_timing_scenarios.py::test_a_turn_that_gets_no_output_is_asked_again_in_a_fresh_session[grok-realtime]",
    # test_provider_text.py
    "tests/test_provider_text.py::test_cli_a_model_that_never_answered_fails_the_run",
    # test_provider_ultravox.py
    "tests/test_provider_ultravox.py::test_cli_run_against_the_fake",
    "tests/test_provider_ultravox.py::test_prior_call_mode_continues_the_call_server_side",
    "tests/test_provider_ultravox.py::test_failed_call_creation_at_rotation_is_reported_and_recovered",
    "tests/test_provider_ultravox.py::test_tool_call_and_age_rotation_replay_history_as_initial_messages",
    # test_ray_multinode.py: each starts its own nodes with `ray start` (test_ray_nodes.py checks the node rules in the default run)
    "tests/test_ray_multinode.py::test_a_campaign_survives_losing_a_ray_node_mid_run",
    "tests/test_ray_multinode.py::test_a_node_that_joins_mid_campaign_takes_cells",
    "tests/test_ray_multinode.py::test_a_node_running_other_arena_tui_code_is_refused_in_one_line_and_the_others_run",
    "tests/test_ray_multinode.py::test_a_cluster_where_no_node_can_run_the_campaign_starts_nothing_and_says_why",
    # test_ray_own_cluster.py
    "tests/test_ray_own_cluster.py::test_a_cluster_the_campaign_started_dies_with_its_coordinator_and_leaves_no_session",
    # test_rehydrate.py
    "tests/test_rehydrate.py::test_grok_fake_sessions_get_the_golden_history",
    "tests/test_rehydrate.py::test_gemini_fake_sessions_get_the_golden_history",
    # test_resume.py
    "tests/test_resume.py::test_resume_after_kill_9",
    # test_run_bounds.py
    "tests/test_run_bounds.py::test_sigterm_ends_a_run_sharing_its_cores_with_four_times_as_many_busy_processes",
    # test_run_outcome.py
    "tests/test_run_outcome.py::test_an_audio_run_no_turn_of_which_got_an_answer_failed[sequential]",
    "tests/test_run_outcome.py::test_an_audio_run_no_turn_of_which_got_an_answer_failed[rehydrated]",
    # test_scripts_smoke.py: every script under scripts/ run small (the list is checked in the default run)
    "tests/test_scripts_smoke.py::test_script_runs_small",
    # test_stage_figures.py
    "tests/test_stage_figures.py::test_headless_summary_prints_the_stage_p50s_on_our_clock",
    "tests/test_stage_figures.py::test_a_sped_up_runs_stage_line_says_it_is_not_comparable",
    "tests/test_stage_figures.py::test_report_carries_the_stages_in_our_columns",
    # test_store_trust.py
    "tests/test_store_trust.py::test_a_turn_shown_as_done_survives_kill_9",
    "tests/test_store_trust.py::test_credentials_inside_base_url_reach_neither_the_file_nor_logs_nor_export",
    "tests/test_store_trust.py::test_run_into_a_damaged_database_stops_with_one_line",
    "tests/test_store_trust.py::test_sigterm_and_sighup_interrupt_a_headless_run_like_ctrl_c[15-143]",
    # test_tool_reply_turn.py
    "tests/test_tool_reply_turn.py::test_a_turn_waits_for_the_reply_after_its_tool_answer[grok]",
    "tests/test_tool_reply_turn.py::test_the_same_run_started_from_the_new_run_dialog",
    "tests/test_tool_reply_turn.py::test_the_tui_config_against_the_grok_fake_keeps_each_reply_with_its_turn",
})
