//! The RPCs of managed resources: validate, upgrade, read, plan, apply, import. Every state they answer with goes
//! through [`Cached::encode_state`](super::Cached::encode_state), which nulls write-only attributes.

use super::rpc::{Failure, Rpc, Target, unread_digests, unsupported};
use super::{ProviderService, convert};
use crate::tfplugin::diag::Diagnostics;
use crate::tfplugin::pb::tfplugin6 as pb;
use crate::tfplugin::provider::{
    ApplyRequest, ImportRequest, ImportedResource, PlanRequest, ReadRequest, UpgradeRequest,
};
use crate::tfplugin::value::Value;
use tracing::{debug, warn};

#[async_trait::async_trait]
impl Rpc for pb::validate_resource_config::Request {
    type Response = pb::validate_resource_config::Response;
    const NAME: &'static str = "ValidateResourceConfig";

    fn target(&self) -> Target<'_> {
        Target::Resource(&self.type_name)
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let entry = svc.resources.get(&req.type_name)?;
        let config = (entry.schema).decode(req.config.as_ref(), "resource configuration", &[])?;
        let client = convert::client_capabilities(req.client_capabilities.as_ref());
        let mut diags = Diagnostics::new();
        entry.schema.refuse_write_only(&config, client, &mut diags);
        diags.extend(entry.handler.validate(&config).await);
        Ok(Self::Response {
            diagnostics: convert::diagnostics(&diags),
        })
    }
}

#[async_trait::async_trait]
impl Rpc for pb::upgrade_resource_state::Request {
    type Response = pb::upgrade_resource_state::Response;
    const NAME: &'static str = "UpgradeResourceState";

    fn target(&self) -> Target<'_> {
        Target::Resource(&self.type_name)
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let entry = svc.resources.get(&req.type_name)?;
        let raw = req.raw_state.take().unwrap_or_default();
        if raw.json.is_empty() && !raw.flatmap.is_empty() {
            return Err(unsupported("Upgrading legacy flatmap state").into());
        }
        let mut diags = Diagnostics::new();
        let upgraded = if raw.json.is_empty() {
            Value::Null
        } else {
            let upgrade = UpgradeRequest {
                type_name: req.type_name.clone(),
                version: req.version,
                raw_state_json: raw.json,
            };
            let resp = entry.handler.upgrade_state(upgrade).await;
            diags.extend(resp.diagnostics);
            resp.upgraded_state
        };
        let upgraded_state = if diags.has_errors() {
            None
        } else {
            (entry.schema).encode_state(upgraded, "upgraded state", &mut diags)
        };
        debug!(from_version = req.version, "upgraded state");
        Ok(Self::Response {
            upgraded_state,
            diagnostics: convert::diagnostics(&diags),
        })
    }
}

#[async_trait::async_trait]
impl Rpc for pb::read_resource::Request {
    type Response = pb::read_resource::Response;
    const NAME: &'static str = "ReadResource";

    fn target(&self) -> Target<'_> {
        Target::Resource(&self.type_name)
    }

    /// A failed read leaves the state and the private state as they were.
    fn failed(&self, diagnostics: Vec<pb::Diagnostic>) -> Self::Response {
        Self::Response {
            new_state: self.current_state.clone(),
            diagnostics,
            private: self.private.clone(),
            deferred: None,
            new_identity: None,
        }
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let entry = svc.resources.get(&req.type_name)?;
        let unread = entry.handler.read_unread_attributes(&req.private);
        let (current_state, received) =
            (entry.schema).decode_unread(req.current_state.as_ref(), "state", unread)?;
        let mut diags = Diagnostics::new();
        let provider_meta = svc.provider_meta(req.provider_meta.as_ref(), &mut diags);
        let client = convert::client_capabilities(req.client_capabilities.as_ref());
        let read = ReadRequest {
            type_name: req.type_name.clone(),
            current_state,
            private: req.private.clone(),
            provider_meta,
            client,
            unread: unread_digests(req.current_state.as_ref(), &received),
        };
        let resp = entry.handler.read(read).await;
        diags.extend(resp.diagnostics);
        let deferred = convert::deferred(resp.deferred, client, &mut diags);
        let new_state = if resp.keep_current_state {
            req.current_state.clone()
        } else {
            let received = (req.current_state.as_ref(), received.as_slice());
            let bytes = &resp.attribute_bytes;
            (entry.schema).encode_state_with(resp.new_state, bytes, received, "state", &mut diags)
        };
        Ok(Self::Response {
            new_state,
            diagnostics: convert::diagnostics(&diags),
            private: resp.private,
            deferred,
            new_identity: None,
        })
    }
}

#[async_trait::async_trait]
impl Rpc for pb::plan_resource_change::Request {
    type Response = pb::plan_resource_change::Response;
    const NAME: &'static str = "PlanResourceChange";

    fn target(&self) -> Target<'_> {
        Target::Resource(&self.type_name)
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let entry = svc.resources.get(&req.type_name)?;
        let schema = &entry.schema;
        let unread = entry.handler.plan_unread_attributes(&req.prior_private);
        let (prior_state, prior_received) =
            schema.decode_unread(req.prior_state.as_ref(), "prior state", unread)?;
        let proposed_new_state = schema.decode(
            req.proposed_new_state.as_ref(),
            "proposed new state",
            unread,
        )?;
        let config = schema.decode(req.config.as_ref(), "configuration", &[])?;
        let mut diags = Diagnostics::new();
        let provider_meta = svc.provider_meta(req.provider_meta.as_ref(), &mut diags);
        let client = convert::client_capabilities(req.client_capabilities.as_ref());
        // Validation refused them already; a client that plans without validating is refused here.
        schema.refuse_write_only(&config, client, &mut diags);
        if diags.has_errors() {
            return Err(diags.into());
        }
        let destroy = proposed_new_state.is_null();
        let plan = PlanRequest {
            type_name: req.type_name.clone(),
            prior_state,
            proposed_new_state,
            config,
            prior_private: std::mem::take(&mut req.prior_private),
            provider_meta,
            client,
            prior_unread: unread_digests(req.prior_state.as_ref(), &prior_received),
        };
        let resp = entry.handler.plan(plan).await;
        diags.extend(resp.diagnostics);
        let mut planned = resp.planned_state;
        if destroy && !planned.is_null() {
            warn!("provider planned a non-null state for a destroy; planning null");
            planned = Value::Null;
        }
        let deferred = convert::deferred(resp.deferred, client, &mut diags);
        // A destroy's planned state is null: bytes given with it are ignored.
        let received = (req.prior_state.as_ref(), prior_received.as_slice());
        let bytes = &resp.attribute_bytes;
        let planned_state =
            schema.encode_state_with(planned, bytes, received, "planned state", &mut diags);
        let requires_replace = resp.requires_replace.len();
        debug!(destroy, requires_replace, "planned");
        Ok(Self::Response {
            planned_state,
            requires_replace: (resp.requires_replace.iter())
                .map(convert::attribute_path)
                .collect(),
            planned_private: resp.planned_private,
            diagnostics: convert::diagnostics(&diags),
            legacy_type_system: false,
            deferred,
            planned_identity: None,
        })
    }
}

#[async_trait::async_trait]
impl Rpc for pb::apply_resource_change::Request {
    type Response = pb::apply_resource_change::Response;
    const NAME: &'static str = "ApplyResourceChange";

    fn target(&self) -> Target<'_> {
        Target::Resource(&self.type_name)
    }

    /// A failed apply leaves the state as it was.
    fn failed(&self, diagnostics: Vec<pb::Diagnostic>) -> Self::Response {
        Self::Response {
            new_state: self.prior_state.clone(),
            diagnostics,
            ..Default::default()
        }
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let entry = svc.resources.get(&req.type_name)?;
        let schema = &entry.schema;
        let unread = entry.handler.apply_unread_attributes(&req.planned_private);
        let prior_state = schema.decode(req.prior_state.as_ref(), "prior state", unread)?;
        let planned_state = schema.decode(req.planned_state.as_ref(), "planned state", &[])?;
        // Decoded: its bytes (megabytes for a large state) are not needed again (a failure answers with the prior
        // state).
        req.planned_state = None;
        let config = schema.decode(req.config.as_ref(), "configuration", &[])?;
        let mut diags = Diagnostics::new();
        let provider_meta = svc.provider_meta(req.provider_meta.as_ref(), &mut diags);
        let apply = ApplyRequest {
            type_name: req.type_name.clone(),
            prior_state,
            planned_state,
            config,
            planned_private: req.planned_private.clone(),
            provider_meta,
        };
        let resp = entry.handler.apply(apply).await;
        diags.extend(resp.diagnostics);
        let new_state = if resp.keep_prior_state {
            req.prior_state.clone()
        } else {
            let bytes = &resp.attribute_bytes;
            schema.encode_state_with(resp.new_state, bytes, (None, &[]), "new state", &mut diags)
        };
        let (errors, kept_prior) = (diags.has_errors(), resp.keep_prior_state);
        debug!(errors, kept_prior, "applied");
        Ok(Self::Response {
            new_state,
            private: resp.private,
            diagnostics: convert::diagnostics(&diags),
            legacy_type_system: false,
            new_identity: None,
        })
    }
}

#[async_trait::async_trait]
impl Rpc for pb::import_resource_state::Request {
    type Response = pb::import_resource_state::Response;
    const NAME: &'static str = "ImportResourceState";

    fn target(&self) -> Target<'_> {
        Target::Resource(&self.type_name)
    }

    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure> {
        let entry = svc.resources.get(&req.type_name)?;
        if req.id.is_empty() && req.identity.is_some() {
            return Err(unsupported("Import by resource identity").into());
        }
        let client = convert::client_capabilities(req.client_capabilities.as_ref());
        let import = ImportRequest {
            type_name: req.type_name.clone(),
            id: std::mem::take(&mut req.id),
            client,
        };
        let resp = entry.handler.import(import).await;
        let mut diags = resp.diagnostics;
        let deferred = convert::deferred(resp.deferred, client, &mut diags);
        let imported_resources = (resp.imported.into_iter())
            .filter_map(|imported| svc.imported(&req.type_name, imported, &mut diags))
            .collect();
        Ok(Self::Response {
            imported_resources,
            diagnostics: convert::diagnostics(&diags),
            deferred,
        })
    }
}

impl ProviderService {
    /// One resource an import answered with (of the imported type unless it names another), encoded with its
    /// type's schema; `None` (and an error) for a type this provider does not have.
    fn imported(
        &self,
        imported_type: &str,
        imported: ImportedResource,
        diags: &mut Diagnostics,
    ) -> Option<pb::import_resource_state::ImportedResource> {
        let type_name = if imported.type_name.is_empty() {
            imported_type.to_owned()
        } else {
            imported.type_name
        };
        let Ok(target) = self.resources.get(&type_name) else {
            diags.push(super::rpc::unknown_type("resource", &type_name));
            return None;
        };
        let state = (target.schema).encode_state(imported.state, "imported state", diags);
        Some(pb::import_resource_state::ImportedResource {
            type_name,
            state,
            private: imported.private,
            identity: None,
        })
    }
}
