"""Other projects' benchmark layouts into ours (`arena-tui benchmarks import`), read without running them."""
