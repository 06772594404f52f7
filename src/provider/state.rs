//! The state the provider shares with its resources, data sources and ephemeral resources: the management
//! cluster's client once `ConfigureProvider` ran (or why there is none), and the clients of `inventory` blocks.
//! Everything in the mapping layer reads its clients from here; nothing here knows a resource.

use std::sync::{Mutex, RwLock};

use crate::{
    k8s::config::{self, KubeSettings},
    tfplugin::{ClientCapabilities, DeferredReason, Diagnostic},
};

/// What `ConfigureProvider` produced.
#[derive(Clone)]
pub enum Configured {
    /// Not configured yet.
    Pending,
    /// A client for the management cluster.
    Ready(kube::Client),
    /// Some attributes are unknown until apply (named).
    Unknown(Vec<String>),
    /// Configuration failed (the diagnostic was already reported by configure).
    Failed(String),
}

/// State shared by the provider's resources and data sources.
pub struct ProviderState {
    configured: RwLock<Configured>,
    /// Clients built from `inventory` blocks, one per distinct settings (a handful at most: one per hub a
    /// configuration names), so that every resource and data source reading the same hub shares one
    /// connection pool. Never logged: the settings may hold a token or a client key.
    inventories: Mutex<Vec<(KubeSettings, kube::Client)>>,
}

/// Why a resource cannot talk to the cluster yet.
pub enum NotReady {
    /// Defer the operation (the client allows it).
    Defer(DeferredReason),
    /// Fail with this diagnostic.
    Fail(Diagnostic),
}

impl ProviderState {
    pub(crate) fn new() -> Self {
        Self {
            configured: RwLock::new(Configured::Pending),
            inventories: Mutex::new(Vec::new()),
        }
    }

    /// Records what `ConfigureProvider` produced.
    pub(crate) fn set_configured(&self, result: Configured) {
        if let Ok(mut c) = self.configured.write() {
            *c = result;
        }
    }

    /// A client for a cluster described by a block with the connection attributes (an `inventory` block),
    /// built on first use and cached per settings. The settings go through the same resolution as the
    /// provider block's ([`config::connect`]) but without environment fallbacks ([`hub_environment`]).
    pub fn client_for(&self, settings: &KubeSettings) -> Result<kube::Client, config::ConfigError> {
        let mut cache = self
            .inventories
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, c)) = cache.iter().find(|(s, _)| s == settings) {
            return Ok(c.clone());
        }
        // No `KUBE_*` fallback: those variables are the provider block's (the management cluster's), and a
        // `KUBE_TOKEN` filled in here would be sent to the hub. What the block says is what connects.
        let client = config::connect(settings, &hub_environment)?;
        cache.push((settings.clone(), client.clone()));
        Ok(client)
    }

    /// How many distinct `inventory` clients were built (for tests of the cache).
    pub fn inventory_clients(&self) -> usize {
        self.inventories
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    /// The Kubernetes client, or why there is none (deferral only when `client` allows it).
    pub fn client(&self, client: ClientCapabilities) -> Result<kube::Client, NotReady> {
        let c = self
            .configured
            .read()
            .map(|c| c.clone())
            .unwrap_or(Configured::Pending);
        match c {
            Configured::Ready(k) => Ok(k),
            Configured::Unknown(_) if client.deferral_allowed => {
                Err(NotReady::Defer(DeferredReason::ProviderConfigUnknown))
            }
            Configured::Unknown(attrs) => Err(NotReady::Fail(Diagnostic::error(
                "Provider configuration is not known until apply",
                format!(
                    "The sveltos provider's {} depend(s) on values known only after apply, and this Terraform \
                     version cannot defer. Apply the resources those values come from first (for example with \
                     -target), or configure the provider with known values. The provider never falls back to a \
                     default cluster.",
                    attrs.join(", ")
                ),
            ))),
            Configured::Failed(why) => Err(NotReady::Fail(Diagnostic::error(
                "Provider configuration failed",
                format!("The sveltos provider could not be configured: {why}"),
            ))),
            Configured::Pending => Err(NotReady::Fail(Diagnostic::error(
                "Provider not configured",
                "Terraform did not configure the sveltos provider before using it.",
            ))),
        }
    }
}

/// The environment an `inventory` block is resolved with: the home directory (to expand `~` in `config_path`),
/// nothing else: no `KUBE_*`, no `KUBECONFIG`, no in-cluster service account.
pub fn hub_environment(name: &str) -> Option<String> {
    matches!(name, "HOME" | "USERPROFILE")
        .then(|| std::env::var(name).ok())
        .flatten()
}
