//! The RPCs of data sources: validate and read.

use super::rpc::{Failure, Rpc, Target};
use super::{ProviderService, convert};
use crate::tfplugin::diag::Diagnostics;
use crate::tfplugin::pb::tfplugin6 as pb;
use crate::tfplugin::provider::DataReadRequest;

#[async_trait::async_trait]
impl Rpc for pb::validate_data_resource_config::Request {
    type Response = pb::validate_data_resource_config::Response;
    const NAME: &'static str = "ValidateDataResourceConfig";

    fn target(&self) -> Target<'_> {
        Target::DataSource(&self.type_name)
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let entry = svc.data_sources.get(&req.type_name)?;
        let what = "data source configuration";
        let config = entry.schema.decode(req.config.as_ref(), what, &[])?;
        let diags = entry.handler.validate(&config).await;
        Ok(Self::Response {
            diagnostics: convert::diagnostics(&diags),
        })
    }
}

#[async_trait::async_trait]
impl Rpc for pb::read_data_source::Request {
    type Response = pb::read_data_source::Response;
    const NAME: &'static str = "ReadDataSource";

    fn target(&self) -> Target<'_> {
        Target::DataSource(&self.type_name)
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let entry = svc.data_sources.get(&req.type_name)?;
        let config = entry
            .schema
            .decode(req.config.as_ref(), "configuration", &[])?;
        let mut diags = Diagnostics::new();
        let provider_meta = svc.provider_meta(req.provider_meta.as_ref(), &mut diags);
        let client = convert::client_capabilities(req.client_capabilities.as_ref());
        let read = DataReadRequest {
            type_name: req.type_name.clone(),
            config,
            provider_meta,
            client,
        };
        let resp = entry.handler.read(read).await;
        diags.extend(resp.diagnostics);
        let deferred = convert::deferred(resp.deferred, client, &mut diags);
        let state = if deferred.is_some() || !resp.state.is_null() || !diags.has_errors() {
            (entry.schema).encode(&resp.state, "data source state", &mut diags)
        } else {
            None
        };
        Ok(Self::Response {
            state,
            diagnostics: convert::diagnostics(&diags),
            deferred,
        })
    }
}
