//! The RPCs about the provider itself: its schema and metadata (built once), validating and configuring it.

use super::rpc::{Failure, Rpc, Target, decode_diag};
use super::{ProviderService, convert};
use crate::tfplugin::diag::Diagnostics;
use crate::tfplugin::pb::tfplugin6 as pb;
use crate::tfplugin::provider::ConfigureRequest;
use crate::tfplugin::value::Value;
use tracing::debug;

fn server_capabilities() -> pb::ServerCapabilities {
    pb::ServerCapabilities {
        plan_destroy: true,
        get_provider_schema_optional: true,
        move_resource_state: false,
        generate_resource_config: false,
    }
}

impl ProviderService {
    /// The answer of `GetProviderSchema`.
    pub(super) fn schema_response(&self) -> pb::get_provider_schema::Response {
        pb::get_provider_schema::Response {
            provider: Some(convert::schema(&self.provider_schema.schema)),
            resource_schemas: self.resources.schemas(),
            data_source_schemas: self.data_sources.schemas(),
            ephemeral_resource_schemas: self.ephemeral_resources.schemas(),
            provider_meta: self
                .provider_meta
                .as_ref()
                .map(|m| convert::schema(&m.schema)),
            server_capabilities: Some(server_capabilities()),
            diagnostics: self.schema_problems(),
            ..Default::default()
        }
    }

    /// The answer of `GetMetadata`.
    pub(super) fn metadata_response(&self) -> pb::get_metadata::Response {
        use pb::get_metadata::{DataSourceMetadata, EphemeralResourceMetadata, ResourceMetadata};
        pb::get_metadata::Response {
            server_capabilities: Some(server_capabilities()),
            resources: (self.resources.names().into_iter())
                .map(|type_name| ResourceMetadata { type_name })
                .collect(),
            data_sources: (self.data_sources.names().into_iter())
                .map(|type_name| DataSourceMetadata { type_name })
                .collect(),
            ephemeral_resources: (self.ephemeral_resources.names().into_iter())
                .map(|type_name| EphemeralResourceMetadata { type_name })
                .collect(),
            ..Default::default()
        }
    }

    /// Problems with where schemas declare write-only attributes (only managed resources may, and never computed
    /// ones), as error diagnostics of `GetProviderSchema`: the CLI then stops before anything runs.
    fn schema_problems(&self) -> Vec<pb::Diagnostic> {
        let mut problems = self
            .provider_schema
            .block()
            .write_only_problems(false, "provider");
        if let Some(meta) = &self.provider_meta {
            problems.extend(meta.block().write_only_problems(false, "provider_meta"));
        }
        problems.extend(self.resources.write_only_problems(true));
        problems.extend(self.data_sources.write_only_problems(false));
        problems.extend(self.ephemeral_resources.write_only_problems(false));
        problems.sort();
        let mut diags = Diagnostics::new();
        for p in problems {
            diags.error("Invalid provider schema", p);
        }
        convert::diagnostics(&diags)
    }

    /// The request's `provider_meta`, decoded (null when the provider has no meta schema); a malformed value is an
    /// error diagnostic, not a failure.
    pub(super) fn provider_meta(
        &self,
        dv: Option<&pb::DynamicValue>,
        diags: &mut Diagnostics,
    ) -> Value {
        let Some(meta) = &self.provider_meta else {
            return Value::Null;
        };
        match convert::decode(dv, &meta.ty) {
            Ok(v) => v,
            Err(e) => {
                diags.push(decode_diag("provider_meta", &e));
                Value::Null
            }
        }
    }
}

#[async_trait::async_trait]
impl Rpc for pb::validate_provider_config::Request {
    type Response = pb::validate_provider_config::Response;
    const NAME: &'static str = "ValidateProviderConfig";

    fn target(&self) -> Target<'_> {
        Target::Provider
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let schema = &svc.provider_schema;
        let config = schema.decode(req.config.as_ref(), "provider configuration", &[])?;
        let diags = svc.provider.validate_config(&config).await;
        Ok(Self::Response {
            diagnostics: convert::diagnostics(&diags),
        })
    }
}

#[async_trait::async_trait]
impl Rpc for pb::configure_provider::Request {
    type Response = pb::configure_provider::Response;
    const NAME: &'static str = "ConfigureProvider";

    fn target(&self) -> Target<'_> {
        Target::Provider
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let schema = &svc.provider_schema;
        let config = schema.decode(req.config.as_ref(), "provider configuration", &[])?;
        let client = convert::client_capabilities(req.client_capabilities.as_ref());
        let terraform_version = std::mem::take(&mut req.terraform_version);
        debug!(%terraform_version, deferral_allowed = client.deferral_allowed, "configuring");
        let configure = ConfigureRequest {
            config,
            terraform_version,
            client,
        };
        let diags = svc.provider.configure(configure).await;
        Ok(Self::Response {
            diagnostics: convert::diagnostics(&diags),
        })
    }
}
