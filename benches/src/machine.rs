//! What a result was measured on, for `bench.json`: CPU model, thread count, OS, and the UTC date.

use serde::Serialize;

/// The host.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// CPU model (`/proc/cpuinfo` `model name`, else `unknown`).
    pub cpu: String,
    /// Hardware threads available to this process.
    pub threads: usize,
    /// `std::env::consts::OS` / `ARCH`.
    pub os: String,
}

impl Machine {
    /// Describe this host.
    pub fn this() -> Self {
        Machine {
            cpu: cpu_model(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
        }
    }
}

/// The CPU model name, or `unknown`.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Now as an RFC 3339 UTC timestamp (`2025-01-31T12:00:00Z`). Civil date from days since the
/// epoch: H. Hinnant, "chrono-Compatible Low-Level Date Algorithms" (`civil_from_days`).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    utc_from_unix(secs)
}

/// [`utc_now`] for `secs` seconds since 1970-01-01T00:00:00Z.
pub fn utc_from_unix(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
