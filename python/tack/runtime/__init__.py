"""tack.runtime: devices and backends (see tack.runtime.dispatch)."""
