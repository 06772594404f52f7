//! `multicluster.x-k8s.io/v1alpha2`, as the test environment serves it next to v1alpha1. Upstream (cluster-inventory-api
//! PR #65) serves both versions, keeps v1alpha1 as the storage version and has no conversion webhook, so an object
//! read through one version is the stored object with that version's schema applied. The bridge reads v1alpha1 while
//! the API server serves it (it keeps `status.credentialProviders`), else v1alpha2 ([`crate::k8s::profiles`]), into
//! one model: [`ClusterProfileV1alpha2`] shares [`ClusterProfile`]'s spec and status types and converts into it.
//!
//! It is derived from the v1alpha1 schema generated from our types, with the v1alpha2 differences that matter to
//! readers: `status.credentialProviders` is gone, and so is the `certificate-authority` file path of an access
//! provider's cluster; `status.accessProviders` holds at most 64 entries.

use std::borrow::Cow;

use k8s_openapi::{
    NamespaceResourceScope,
    apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        CustomResourceDefinition, JSONSchemaProps,
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube::Resource;
use serde::Deserialize;

use super::{ClusterProfile, ClusterProfileSpec, ClusterProfileStatus};

/// The version name.
pub const V1ALPHA2: &str = "v1alpha2";

/// The most access providers a v1alpha2 ClusterProfile holds.
pub const MAX_ACCESS_PROVIDERS: i64 = 64;

/// A ClusterProfile as read through `multicluster.x-k8s.io/v1alpha2`: the v1alpha1 spec and status types (the
/// fields v1alpha2 lacks are simply absent), for reads only. [`ClusterProfile::from`] makes it the one model.
#[derive(Deserialize, Clone, Debug)]
pub struct ClusterProfileV1alpha2 {
    /// Its metadata.
    pub metadata: ObjectMeta,
    /// Its spec.
    pub spec: ClusterProfileSpec,
    /// Its status.
    #[serde(default)]
    pub status: Option<ClusterProfileStatus>,
}

impl Resource for ClusterProfileV1alpha2 {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        ClusterProfile::kind(&())
    }
    fn group(_: &()) -> Cow<'_, str> {
        ClusterProfile::group(&())
    }
    fn version(_: &()) -> Cow<'_, str> {
        V1ALPHA2.into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        ClusterProfile::plural(&())
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl From<ClusterProfileV1alpha2> for ClusterProfile {
    /// The same object in the one model; `status.credentialProviders` empty, as v1alpha2 has no such field.
    fn from(v2: ClusterProfileV1alpha2) -> Self {
        let status = v2.status.map(|mut s| {
            s.credential_providers.clear();
            s
        });
        ClusterProfile {
            metadata: v2.metadata,
            spec: v2.spec,
            status,
        }
    }
}

/// `crd` (the generated v1alpha1 CRD) with a served, non-storage v1alpha2 version after its first version.
pub fn with_v1alpha2(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    let Some(mut v2) = crd.spec.versions.first().cloned() else {
        return crd;
    };
    v2.name = V1ALPHA2.into();
    v2.served = true;
    v2.storage = false;
    if let Some(root) = v2
        .schema
        .as_mut()
        .and_then(|s| s.open_api_v3_schema.as_mut())
    {
        v1alpha2_schema(root);
    }
    crd.spec.versions.push(v2);
    crd
}

fn v1alpha2_schema(root: &mut JSONSchemaProps) {
    let Some(status) = property(root, "status") else {
        return;
    };
    if let Some(props) = status.properties.as_mut() {
        props.remove("credentialProviders");
    }
    let Some(providers) = property(status, "accessProviders") else {
        return;
    };
    providers.max_items = Some(MAX_ACCESS_PROVIDERS);
    let item = providers.items.as_mut().and_then(|items| match items {
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray::Schema(s) => {
            Some(s)
        }
        _ => None,
    });
    if let Some(cluster) = item.and_then(|i| property(i, "cluster"))
        && let Some(props) = cluster.properties.as_mut()
    {
        props.remove("certificate-authority");
    }
}

fn property<'a>(schema: &'a mut JSONSchemaProps, name: &str) -> Option<&'a mut JSONSchemaProps> {
    schema.properties.as_mut()?.get_mut(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v1alpha2_read_becomes_the_one_model_without_credential_providers() {
        let provider = serde_json::json!({"name": "p", "cluster": {"server": "https://h"}});
        let v2: ClusterProfileV1alpha2 = serde_json::from_value(serde_json::json!({
            "apiVersion": "multicluster.x-k8s.io/v1alpha2", "kind": "ClusterProfile",
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"displayName": "C", "clusterManager": {"name": "m"}},
            "status": {"accessProviders": [provider], "credentialProviders": [provider]}
        }))
        .unwrap();
        assert_eq!(
            ClusterProfileV1alpha2::url_path(&(), Some("ns")),
            "/apis/multicluster.x-k8s.io/v1alpha2/namespaces/ns/clusterprofiles"
        );
        let one = ClusterProfile::from(v2);
        assert_eq!(one.key(), "ns/c");
        assert_eq!(one.spec.display_name.as_deref(), Some("C"));
        let status = one.status.expect("a status");
        assert_eq!(status.access_providers.len(), 1);
        assert!(status.credential_providers.is_empty());
    }
}
