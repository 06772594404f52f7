//! What a provider binary's `main` does once it has read its arguments: process set-up, the async runtime,
//! logging, [`serve`](super::serve) and an exit code. The provider and the benchmark's floor provider
//! (`bench/floor`) share it, so both run with the same runtime and allocator settings.

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
    one_malloc_arena();
    builtin_name_services();
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

/// glibc gives every thread that allocates its own malloc arena, and memory freed into one arena is not reused by
/// another: a plan that parses LIST pages on several runtime threads then peaks at about 1.4x its live heap (10,000
/// profiles: 301 MB resident with the default, 213 MB with one arena, no measurable change in wall time). One
/// arena, set before any thread starts.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn one_malloc_arena() {
    // SAFETY: mallopt only changes allocator tuning; it is called before the runtime starts any thread.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn one_malloc_arena() {}

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
