//! What a provider binary's `main` does once it has read its arguments: process set-up, the async runtime,
//! logging, [`serve`](super::serve) and an exit code. The provider and the benchmark's floor provider
//! (`baselines/floor`) share it, so both run with the same runtime and allocator settings.

use std::process::ExitCode;
use std::sync::Arc;

use super::provider::Provider;
use super::serve::{ServeError, ServeOptions, serve};

/// Serves the provider that `provider` builds until the plugin host ends the process, and maps the outcome to
/// an exit code. `name` prefixes the error printed on stderr; `init_logging` runs inside the runtime set-up,
/// before the provider is built.
pub fn run(
    name: &str,
    opts: ServeOptions,
    init_logging: impl FnOnce(),
    provider: impl FnOnce() -> Arc<dyn Provider>,
) -> ExitCode {
    tune_malloc();
    builtin_name_services();
    if !opts.debug {
        exit_with_parent(name);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{name}: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    init_logging();
    match runtime.block_on(serve(provider(), opts)) {
        Ok(()) => {
            // Do not wait for lingering blocking tasks (e.g. stdin readers) once the host asked us to exit.
            runtime.shutdown_timeout(std::time::Duration::from_millis(100));
            ExitCode::SUCCESS
        }
        Err(ServeError::NotStartedByTerraform) => {
            eprintln!("{}", ServeError::NotStartedByTerraform);
            ExitCode::FAILURE
        }
        Err(e) => {
            tracing::error!(error = %e, "provider server failed");
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The process that started this one, when it is watched ([`exit_with_parent`]).
static STARTED_BY: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

/// Whether the plugin host that started this process is still its parent (always true when it is not watched:
/// debug mode, tests, other platforms). A provider whose host is gone answers nobody: what it answers is not
/// saved in any state.
pub fn host_alive() -> bool {
    #[cfg(unix)]
    if let Some(parent) = STARTED_BY.get() {
        return std::os::unix::process::parent_id() == *parent;
    }
    true
}

/// How often the provider checks that the CLI that started it is still there.
pub const PARENT_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// Ends the process as soon as the plugin host that started it (Terraform, OpenTofu) is gone, so that a killed CLI
/// never leaves a provider running (and writing) behind it: a thread compares the parent process id with the one
/// at start every [`PARENT_POLL`] (a dead parent's children are re-parented). A graceful stop is not affected:
/// the host is alive and stops the provider itself. Why not `PR_SET_PDEATHSIG`: it fires when the *thread* that
/// started the child exits, and the Go runtimes of both CLIs may start plugins from threads that end before the
/// process does.
#[cfg(unix)]
fn exit_with_parent(name: &str) {
    let parent = std::os::unix::process::parent_id();
    if parent <= 1 {
        return;
    }
    let _ = STARTED_BY.set(parent);
    let name = name.to_string();
    let watch = move || {
        loop {
            std::thread::sleep(PARENT_POLL);
            if std::os::unix::process::parent_id() != parent {
                // Not `eprintln!`: the parent held the other end of stderr, and a write to a closed pipe would
                // panic this thread instead of ending the process.
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "{name}: the process that started it ({parent}) is gone; exiting"
                );
                std::process::exit(1);
            }
        }
    };
    // Without the thread the provider still works; it only would not notice a dead parent.
    let _ = std::thread::Builder::new()
        .name("parent-watch".into())
        .spawn(watch);
}

#[cfg(not(unix))]
fn exit_with_parent(_: &str) {}

/// glibc gives every thread that allocates its own malloc arena, and memory freed into one arena is not reused by
/// another: a plan that parses LIST pages on several runtime threads then peaks at about 1.4x its live heap (10,000
/// profiles: 301 MB resident with the default, 213 MB with one arena, no measurable change in wall time). One
/// arena, set before any thread starts.
///
/// And a fixed mmap threshold of 128 KiB: glibc raises its threshold to the size of each large block freed (up to
/// 32 MiB), so after the first LIST answer is freed the next ones, and the vectors grown while decoding them, come
/// from the heap, whose freed holes stay resident. With the threshold fixed every large block is mapped on its
/// own, returned when freed, and grown in place (`mremap`). Measured at 10,000 clusters (an apply of 1 % changes,
/// interleaved): 142–146 MB resident against 152–158 MB, with less CPU (2.2–2.3 s against 2.4–2.5 s).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_malloc() {
    // SAFETY: mallopt only changes allocator tuning; it is called before the runtime starts any thread.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 10);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_malloc() {}

/// A statically linked glibc build (`-C target-feature=+crt-static`: the linux_amd64 release) has glibc's `files`
/// and `dns` name services built in, but would `dlopen` any other service that /etc/nsswitch.conf names
/// (`resolve`, `myhostname`, `mdns4_minimal`, `systemd`, `sss`, ...) from the host's shared libraries, built for
/// another glibc version than the one linked in, or fail the lookup where there are none. Such a build therefore
/// looks host names (the API server's) up in /etc/hosts and then by DNS as /etc/resolv.conf says, and users (the
/// home directory when `HOME` is unset) in /etc/passwd, whatever nsswitch.conf says, as musl-based systems do.
/// Called before any thread starts, so that no lookup runs while the configuration changes.
#[cfg(all(target_os = "linux", target_env = "gnu", target_feature = "crt-static"))]
fn builtin_name_services() {
    use std::ffi::{c_char, c_int};
    unsafe extern "C" {
        // <nss.h>: replaces the services of one database as if nsswitch.conf named them; 0 on success.
        fn __nss_configure_lookup(dbname: *const c_char, service_line: *const c_char) -> c_int;
    }
    for (database, services) in [(c"hosts", c"files dns"), (c"passwd", c"files")] {
        // SAFETY: both arguments are NUL-terminated strings that outlive the call, and no other thread exists yet,
        // so no lookup reads the configuration while it changes. It fails only for an unknown database name.
        let failed = unsafe { __nss_configure_lookup(database.as_ptr(), services.as_ptr()) } != 0;
        debug_assert!(!failed, "__nss_configure_lookup({database:?}) failed");
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu", target_feature = "crt-static")))]
fn builtin_name_services() {}
