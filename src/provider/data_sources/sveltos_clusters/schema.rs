//! The schema of `sveltos_clusters`: its filters and the computed `clusters` list.

use crate::tfplugin::{
    Schema, Type,
    schema::{Attribute, Block},
};

/// The computed attributes of one element of `clusters`.
fn cluster_attributes() -> Vec<Attribute> {
    let c = |a: Attribute, doc: &str| a.computed().markdown_description(doc);
    vec![
        c(
            Attribute::string("id"),
            "`namespace/name` of the SveltosCluster.",
        ),
        c(Attribute::string("name"), "Name of the SveltosCluster."),
        c(
            Attribute::string("namespace"),
            "Namespace of the SveltosCluster.",
        ),
        c(
            Attribute::map("labels", Type::String),
            "Labels of the SveltosCluster, whoever wrote them (including those Sveltos writes, e.g. \
             `projectsveltos.io/k8s-version`): on a cluster the bridge owns, `foreign_label_keys` tells which of \
             them the bridge did not write.",
        ),
        c(
            Attribute::list("foreign_label_keys", Type::String),
            "For a SveltosCluster the bridge named in `bridge` owns: the keys of its labels that bridge did not \
             write (its field manager owns none of them), but for Sveltos' own `projectsveltos.io/k8s-version`; \
             sorted. Someone who may patch the SveltosCluster added them, and Sveltos selects add-ons by them. \
             Null when `bridge` is not set or does not own the cluster.",
        ),
        c(
            Attribute::bool("ready"),
            "`status.ready`: whether Sveltos reached the cluster (`false` until Sveltos reports it).",
        ),
        c(
            Attribute::string("connection_status"),
            "`status.connectionStatus` (`Healthy` or `Down`; null until Sveltos reports it).",
        ),
        c(
            Attribute::string("failure_message"),
            "`status.failureMessage` (null when none).",
        ),
        c(
            Attribute::number("connection_failures"),
            "`status.connectionFailures`: failed connections (or liveness checks) in a row; at \
             `consecutiveFailureThreshold` the cluster is `Down` (null until Sveltos reports it).",
        ),
        c(
            Attribute::string("last_renewed_at"),
            "`status.lastReconciledTokenRequestAt`: when sveltoscluster-manager last renewed the cluster's token \
             (`token_renewal`; RFC 3339, null until it first did). A `check` block can fail on a cluster that \
             stopped renewing.",
        ),
        c(
            Attribute::string("version"),
            "`status.version`: the Kubernetes version Sveltos found (null until reported).",
        ),
        c(
            Attribute::bool("paused"),
            "`spec.paused` (`false` when unset).",
        ),
        c(
            Attribute::string("credential_expires_at"),
            "The credential expiry (RFC 3339) that the bridge named in `bridge` recorded on the kubeconfig Secret \
             it owns for this cluster. Null when `bridge` is not set, when the bridge does not own the cluster or \
             its Secret, when no expiry was recorded (static credentials), or when the recorded value is not an \
             RFC 3339 timestamp.",
        ),
        c(
            Attribute::bool("owned"),
            "Whether the bridge named in `bridge` owns this SveltosCluster, by the bridge's own rule: the cluster \
             carries the bridge's label and is the object the bridge created (its UID, as recorded in the bridge's \
             claim at the end of its last apply, or the mark of a run of the bridge that died before recording \
             it). A label copied onto another SveltosCluster is not ownership. Null when `bridge` is not set, and \
             when the bridge's claim holds no record (last applied by an earlier version of the provider: apply it \
             once; a warning says so).",
        ),
    ]
}

/// The object type of one element of `clusters`.
pub fn cluster_object_type() -> Type {
    let mut block = Block::new();
    for a in cluster_attributes() {
        block = block.attribute(a);
    }
    block.value_type()
}

/// The arguments of `sveltos_clusters`: the bridge whose ownership is reported (with where its claim is and which
/// instance it is), and the filters on ownership, namespace and labels.
fn argument_attributes() -> Vec<Attribute> {
    vec![
        Attribute::string("bridge")
            .optional()
            .markdown_description(
                "The `name` of a `sveltos_cluster_inventory_bridge`. Only the SveltosClusters it owns are \
                 listed (unless `owned_only = false`), and `owned` and `credential_expires_at` are reported \
                 for it.",
            ),
        Attribute::string("claim_namespace")
            .optional()
            .markdown_description(
                "With `bridge`: the `claim_namespace` of that bridge, where its claim (ConfigMap \
                 `sveltos-bridge-<name>`) records what it owns (default `default`). Reading it needs `get` on \
                 ConfigMaps there.",
            ),
        Attribute::string("instance_id")
            .optional()
            .markdown_description(
                "With `bridge`: that bridge's `instance_id` (e.g. `sveltos_cluster_inventory_bridge.fleet.instance_id`). \
                 The claim must then be that instance's: a claim another state wrote, or none at all (a wrong \
                 `claim_namespace`), is an error instead of a list in which nothing is owned.",
            ),
        Attribute::bool("owned_only")
            .optional()
            .markdown_description(
                "With `bridge`: list only the SveltosClusters that bridge owns (default `true`). Set it to \
                 `false` to list every SveltosCluster matching the other filters, `owned` telling which are \
                 the bridge's. Requires `bridge` when `true`.",
            ),
        Attribute::list("namespaces", Type::String)
            .optional()
            .markdown_description("Only SveltosClusters in these namespaces (default: all namespaces)."),
        Attribute::string("label_selector")
            .optional()
            .markdown_description(
                "Only SveltosClusters whose labels match this Kubernetes label selector, e.g. \
                 `env=prod,tier in (a,b),!legacy`.",
            ),
    ]
}

/// The schema of `sveltos_clusters`.
pub fn schema() -> Schema {
    let mut schema = Schema::new(0)
        .markdown_description(
            "Lists Sveltos `SveltosCluster`s (`lib.projectsveltos.io/v1beta1`) with the status Sveltos reports for \
             them (`ready`, `connection_status`, `failure_message`, `version`), whether a given \
             `sveltos_cluster_inventory_bridge` owns them, and the credential expiry it recorded. Use it after \
             `apply` to see which bridged clusters Sveltos actually reached, for example in a `check` block. Never \
             reads Secret data.",
        )
        .attribute(
            Attribute::string("id")
                .computed()
                .markdown_description("A description of the query (the filters)."),
        );
    for a in argument_attributes() {
        schema = schema.attribute(a);
    }
    schema.attribute(
        Attribute::list("clusters", cluster_object_type())
            .computed()
            .markdown_description(
                "The matching SveltosClusters, ordered by namespace and name: `id`, `name`, `namespace`, \
                 `labels`, `ready`, `connection_status`, `failure_message`, `connection_failures`, \
                 `last_renewed_at`, `version`, `paused`, `credential_expires_at`, `owned`, `foreign_label_keys`.",
            ),
    )
}
