"""Running cases: the argument stream and batch files (harness, batch, options, settings),
the one case flow every driver runs (case), where and in which order cases run (runner,
execute, workers, shard, progress), and the timing loop, the memory guard and the
implementation filter they share."""
