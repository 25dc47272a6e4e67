"""Starting and supervising runs: the one layer of arena_tui that imports the engine (`runners`).

The app's launcher (`launch`: preflight, `EngineLauncher`) and the engine's own thread
(`engine_thread`), a headless run's progress (`headless`, `logs`), the judge a run gets
(`live`), resuming a run (`resume`), a run's settings (`settings`), the simulator served alone
(`simulator`) and campaigns: the coordinator (`orchestrator`) and its executors (`executor`,
`local`, `ray_executor` with `ray_cluster`, `ray_nodes`, `ray_logs`, `ray_worker`, `ray_scratch`, `ray_own`,
`ray_reaper`, `worker`, `transport`, `lifeline`, `admission`). Commands parse and
print around these; the data the campaign screens read stays in `arena_tui.campaign`.
"""
