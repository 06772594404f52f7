//! The provider (placeholder: empty configuration, no resources; replaced by the provider implementation).

use crate::tfplugin::{self, ConfigureRequest, DataSource, Diagnostics, Resource, Schema};
use std::sync::Arc;

struct EmptyProvider;

#[async_trait::async_trait]
impl tfplugin::Provider for EmptyProvider {
    fn schema(&self) -> Schema {
        Schema::new(0)
    }

    fn resources(&self) -> Vec<Arc<dyn Resource>> {
        Vec::new()
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        Vec::new()
    }

    async fn configure(&self, _req: ConfigureRequest) -> Diagnostics {
        Diagnostics::new()
    }
}

/// Builds the provider.
pub fn new() -> Arc<dyn tfplugin::Provider> {
    Arc::new(EmptyProvider)
}
