//! The RPCs of ephemeral resources: validate, open, renew, close.

use super::rpc::{Failure, Rpc, Target};
use super::{ProviderService, convert};
use crate::tfplugin::pb::tfplugin6 as pb;
use crate::tfplugin::provider::{
    CloseEphemeralRequest, OpenEphemeralRequest, RenewEphemeralRequest,
};
use tracing::debug;

#[async_trait::async_trait]
impl Rpc for pb::validate_ephemeral_resource_config::Request {
    type Response = pb::validate_ephemeral_resource_config::Response;
    const NAME: &'static str = "ValidateEphemeralResourceConfig";

    fn target(&self) -> Target<'_> {
        Target::Ephemeral(&self.type_name)
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let entry = svc.ephemeral_resources.get(&req.type_name)?;
        let what = "ephemeral resource configuration";
        let config = entry.schema.decode(req.config.as_ref(), what, &[])?;
        let diags = entry.handler.validate(&config).await;
        Ok(Self::Response {
            diagnostics: convert::diagnostics(&diags),
        })
    }
}

#[async_trait::async_trait]
impl Rpc for pb::open_ephemeral_resource::Request {
    type Response = pb::open_ephemeral_resource::Response;
    const NAME: &'static str = "OpenEphemeralResource";

    fn target(&self) -> Target<'_> {
        Target::Ephemeral(&self.type_name)
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let entry = svc.ephemeral_resources.get(&req.type_name)?;
        let config = entry
            .schema
            .decode(req.config.as_ref(), "configuration", &[])?;
        let client = convert::client_capabilities(req.client_capabilities.as_ref());
        let open = OpenEphemeralRequest {
            type_name: req.type_name.clone(),
            config,
            client,
        };
        let resp = entry.handler.open(open).await;
        let mut diags = resp.diagnostics;
        let deferred = convert::deferred(resp.deferred, client, &mut diags);
        let result = if deferred.is_some() || !resp.result.is_null() || !diags.has_errors() {
            (entry.schema).encode(&resp.result, "ephemeral resource result", &mut diags)
        } else {
            None
        };
        let (errors, renew) = (diags.has_errors(), resp.renew_at.is_some());
        debug!(errors, renew, "opened");
        Ok(Self::Response {
            diagnostics: convert::diagnostics(&diags),
            renew_at: resp.renew_at.map(prost_types::Timestamp::from),
            result,
            private: (!resp.private.is_empty()).then_some(resp.private),
            deferred,
        })
    }
}

#[async_trait::async_trait]
impl Rpc for pb::renew_ephemeral_resource::Request {
    type Response = pb::renew_ephemeral_resource::Response;
    const NAME: &'static str = "RenewEphemeralResource";

    fn target(&self) -> Target<'_> {
        Target::Ephemeral(&self.type_name)
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let entry = svc.ephemeral_resources.get(&req.type_name)?;
        let current = req.private.take().unwrap_or_default();
        let renew = RenewEphemeralRequest {
            type_name: req.type_name.clone(),
            private: current.clone(),
        };
        let resp = entry.handler.renew(renew).await;
        let errors = resp.diagnostics.has_errors();
        debug!(errors, renew = resp.renew_at.is_some(), "renewed");
        let private = resp.private.unwrap_or(current);
        Ok(Self::Response {
            diagnostics: convert::diagnostics(&resp.diagnostics),
            renew_at: resp.renew_at.map(prost_types::Timestamp::from),
            private: (!private.is_empty()).then_some(private),
        })
    }
}

#[async_trait::async_trait]
impl Rpc for pb::close_ephemeral_resource::Request {
    type Response = pb::close_ephemeral_resource::Response;
    const NAME: &'static str = "CloseEphemeralResource";

    fn target(&self) -> Target<'_> {
        Target::Ephemeral(&self.type_name)
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let entry = svc.ephemeral_resources.get(&req.type_name)?;
        let close = CloseEphemeralRequest {
            type_name: req.type_name.clone(),
            private: req.private.take().unwrap_or_default(),
        };
        let diags = entry.handler.close(close).await;
        debug!(errors = diags.has_errors(), "closed");
        Ok(Self::Response {
            diagnostics: convert::diagnostics(&diags),
        })
    }
}
