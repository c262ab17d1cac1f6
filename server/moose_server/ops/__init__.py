"""Running it: metrics, logs, instance liveness, the garbage collector's clock."""
