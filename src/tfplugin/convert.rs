//! Conversions between the provider-facing types and the generated protocol types.

use super::diag::{Diagnostic, Diagnostics, Severity};
use super::path::{AttributePath, PathStep};
use super::pb::tfplugin6 as pb;
use super::provider::{ClientCapabilities, DeferredReason};
use super::schema::{
    Attribute, AttributeType, Block, BlockNesting, NestedBlock, Nesting, Schema, StringKind,
};
use super::value::{Type, Value, ValueError, json, msgpack};

pub(crate) fn diagnostic(d: &Diagnostic) -> pb::Diagnostic {
    pb::Diagnostic {
        severity: match d.severity {
            Severity::Error => pb::diagnostic::Severity::Error as i32,
            Severity::Warning => pb::diagnostic::Severity::Warning as i32,
        },
        summary: d.summary.clone(),
        detail: d.detail.clone(),
        attribute: d.attribute.as_ref().map(attribute_path),
    }
}

pub(crate) fn diagnostics(d: &Diagnostics) -> Vec<pb::Diagnostic> {
    d.iter().map(diagnostic).collect()
}

pub(crate) fn attribute_path(p: &AttributePath) -> pb::AttributePath {
    use pb::attribute_path::{Step, step::Selector};
    pb::AttributePath {
        steps: p
            .steps()
            .iter()
            .map(|s| Step {
                selector: Some(match s {
                    PathStep::Attribute(n) => Selector::AttributeName(n.clone()),
                    PathStep::KeyString(k) => Selector::ElementKeyString(k.clone()),
                    PathStep::KeyInt(i) => Selector::ElementKeyInt(*i),
                }),
            })
            .collect(),
    }
}

pub(crate) fn client_capabilities(c: Option<&pb::ClientCapabilities>) -> ClientCapabilities {
    c.map(|c| ClientCapabilities {
        deferral_allowed: c.deferral_allowed,
        write_only_attributes_allowed: c.write_only_attributes_allowed,
    })
    .unwrap_or_default()
}

/// The error diagnostics for write-only attributes set in `config` (paths from [`Block::write_only_set`]) when
/// the client cannot handle write-only attributes: such a client (Terraform before 1.11, OpenTofu before 1.11) does
/// not know the attribute is write-only and would store its value in state and plan files.
pub(crate) fn write_only_refused(
    paths: &[AttributePath],
    client: ClientCapabilities,
    diags: &mut Diagnostics,
) {
    if client.write_only_attributes_allowed {
        return;
    }
    for path in paths {
        diags.push(
            Diagnostic::error(
                "Write-only attribute not supported by this Terraform version",
                format!(
                    "{path} is write-only: its value is handed to the provider and never stored in state or plan \
                     files. This Terraform / OpenTofu version does not support write-only attributes (Terraform \
                     1.11 and OpenTofu 1.11 are the first that do) and would store the value, so the provider \
                     refuses it. Upgrade the CLI, or use an argument that is not write-only."
                ),
            )
            .with_attribute(path.clone()),
        );
    }
}

/// Converts a provider's deferral into the protocol, honouring the client's capabilities: when deferral is not
/// allowed, an error diagnostic is added instead and nothing is deferred.
pub(crate) fn deferred(
    reason: Option<DeferredReason>,
    client: ClientCapabilities,
    diags: &mut Diagnostics,
) -> Option<pb::Deferred> {
    let reason = reason?;
    if !client.deferral_allowed {
        diags.error(
            "Deferred action not supported by this Terraform version",
            "The provider needs to defer this action to a later run (for example because its configuration \
             depends on values not known yet), but this Terraform / OpenTofu version does not support deferred \
             actions. Make the values known (e.g. apply dependencies first with -target) and retry.",
        );
        return None;
    }
    use pb::deferred::Reason;
    let r = match reason {
        DeferredReason::Unknown => Reason::Unknown,
        DeferredReason::ResourceConfigUnknown => Reason::ResourceConfigUnknown,
        DeferredReason::ProviderConfigUnknown => Reason::ProviderConfigUnknown,
        DeferredReason::AbsentPrereq => Reason::AbsentPrereq,
    };
    Some(pb::Deferred { reason: r as i32 })
}

fn string_kind(k: StringKind) -> i32 {
    match k {
        StringKind::Plain => pb::StringKind::Plain as i32,
        StringKind::Markdown => pb::StringKind::Markdown as i32,
    }
}

pub(crate) fn schema(s: &Schema) -> pb::Schema {
    pb::Schema {
        version: s.version,
        block: Some(block(&s.block, s.version)),
    }
}

fn block(b: &Block, version: i64) -> pb::schema::Block {
    pb::schema::Block {
        version,
        attributes: b.attributes.iter().map(attribute).collect(),
        block_types: b.blocks.iter().map(nested_block).collect(),
        description: b.description.clone(),
        description_kind: string_kind(b.description_kind),
        deprecated: b.deprecated,
        deprecation_message: b.deprecation_message.clone(),
    }
}

fn attribute(a: &Attribute) -> pb::schema::Attribute {
    let (ty, nested_type) = match &a.kind {
        AttributeType::Type(t) => (t.to_json_bytes(), None),
        AttributeType::Nested(n) => {
            use pb::schema::object::NestingMode;
            let nesting = match n.nesting {
                Nesting::Single => NestingMode::Single,
                Nesting::List => NestingMode::List,
                Nesting::Set => NestingMode::Set,
                Nesting::Map => NestingMode::Map,
            };
            #[allow(deprecated)]
            let obj = pb::schema::Object {
                attributes: n.attributes.iter().map(attribute).collect(),
                nesting: nesting as i32,
                min_items: 0,
                max_items: 0,
            };
            (Vec::new(), Some(obj))
        }
    };
    pb::schema::Attribute {
        name: a.name.clone(),
        r#type: ty,
        nested_type,
        description: a.description.clone(),
        required: a.required,
        optional: a.optional,
        computed: a.computed,
        sensitive: a.sensitive,
        description_kind: string_kind(a.description_kind),
        deprecated: a.deprecated,
        write_only: a.write_only,
        deprecation_message: a.deprecation_message.clone(),
    }
}

fn nested_block(b: &NestedBlock) -> pb::schema::NestedBlock {
    use pb::schema::nested_block::NestingMode;
    let nesting = match b.nesting {
        BlockNesting::Single => NestingMode::Single,
        BlockNesting::Group => NestingMode::Group,
        BlockNesting::List => NestingMode::List,
        BlockNesting::Set => NestingMode::Set,
        BlockNesting::Map => NestingMode::Map,
    };
    pb::schema::NestedBlock {
        type_name: b.type_name.clone(),
        block: Some(block(&b.block, 0)),
        nesting: nesting as i32,
        min_items: b.min_items,
        max_items: b.max_items,
    }
}

/// Decodes an optional `DynamicValue` (absent or empty = null).
pub(crate) fn decode(dv: Option<&pb::DynamicValue>, ty: &Type) -> Result<Value, ValueError> {
    match dv {
        None => Ok(Value::Null),
        Some(dv) if !dv.msgpack.is_empty() => msgpack::decode(&dv.msgpack, ty),
        Some(dv) if !dv.json.is_empty() => json::decode(&dv.json, ty),
        Some(_) => Ok(Value::Null),
    }
}

/// Encodes a value of a schema's block as a `DynamicValue`, normalizing nested blocks first.
pub(crate) fn encode(v: &Value, b: &Block, ty: &Type) -> Result<pb::DynamicValue, ValueError> {
    // Normalizing copies the value: only when there is something to fix (a state of ten thousand map entries is
    // tens of megabytes).
    let msgpack = if is_normal(v, b) {
        msgpack::encode(v, ty)?
    } else {
        msgpack::encode(&normalize(v, b), ty)?
    };
    Ok(pb::DynamicValue {
        msgpack,
        json: Vec::new(),
    })
}

/// Whether [`normalize`] would leave `v` as it is.
fn is_normal(v: &Value, b: &Block) -> bool {
    let Value::Object(map) = v else {
        return true;
    };
    b.blocks.iter().all(
        |nb| match (nb.nesting, map.get(&nb.type_name).unwrap_or(&Value::Null)) {
            (
                BlockNesting::List | BlockNesting::Set | BlockNesting::Map | BlockNesting::Group,
                Value::Null,
            ) => false,
            (_, Value::List(items) | Value::Set(items)) => {
                items.iter().all(|i| is_normal(i, &nb.block))
            }
            (_, Value::Map(items)) => items.values().all(|i| is_normal(i, &nb.block)),
            (_, other) => is_normal(other, &nb.block),
        },
    )
}

/// Terraform never has null list/set/map blocks or null group blocks: absent ones are empty collections (or an
/// object of nulls). Providers may simply leave them out or null; this fixes that up before encoding.
pub(crate) fn normalize(v: &Value, b: &Block) -> Value {
    let Value::Object(map) = v else {
        return v.clone();
    };
    if b.blocks.is_empty() {
        return v.clone();
    }
    let mut out = map.clone();
    for nb in &b.blocks {
        let current = map.get(&nb.type_name).unwrap_or(&Value::Null);
        let new = match (nb.nesting, current) {
            (BlockNesting::List, Value::Null) => Value::List(Vec::new()),
            (BlockNesting::Set, Value::Null) => Value::Set(Vec::new()),
            (BlockNesting::Map, Value::Null) => Value::Map(Default::default()),
            (BlockNesting::Group, Value::Null) => {
                let empty = nb
                    .block
                    .attributes
                    .iter()
                    .map(|a| (a.name.clone(), Value::Null));
                normalize(&Value::Object(empty.collect()), &nb.block)
            }
            (_, Value::List(items)) => {
                Value::List(items.iter().map(|i| normalize(i, &nb.block)).collect())
            }
            (_, Value::Set(items)) => {
                Value::Set(items.iter().map(|i| normalize(i, &nb.block)).collect())
            }
            (_, Value::Map(items)) => Value::Map(
                items
                    .iter()
                    .map(|(k, i)| (k.clone(), normalize(i, &nb.block)))
                    .collect(),
            ),
            (_, other) => normalize(other, &nb.block),
        };
        out.insert(nb.type_name.clone(), new);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_blocks() {
        let b = Block::new()
            .block(NestedBlock::list("l", Block::new()))
            .block(NestedBlock::set("s", Block::new()))
            .block(NestedBlock::group(
                "g",
                Block::new().attribute(Attribute::string("x").optional()),
            ))
            .block(NestedBlock::single("o", Block::new()));
        let before = Value::object([("l", Value::Null)]);
        assert!(!is_normal(&before, &b));
        let v = normalize(&before, &b);
        assert!(is_normal(&v, &b), "normalizing twice changes nothing");
        assert_eq!(v.get_attr("l"), &Value::List(vec![]));
        assert_eq!(v.get_attr("s"), &Value::Set(vec![]));
        assert_eq!(v.get_attr("g"), &Value::object([("x", Value::Null)]));
        assert!(v.get_attr("o").is_null());
    }

    #[test]
    fn write_only_values_are_refused_without_the_capability() {
        let paths = [AttributePath::attr("conn").then_attr("token_wo")];
        let mut d = Diagnostics::new();
        let allowed = ClientCapabilities {
            write_only_attributes_allowed: true,
            ..Default::default()
        };
        write_only_refused(&paths, allowed, &mut d);
        assert!(d.is_empty());
        write_only_refused(&paths, ClientCapabilities::default(), &mut d);
        assert!(d.has_errors());
        let diag = d.iter().next().unwrap();
        assert_eq!(
            diag.attribute.as_ref().map(ToString::to_string).as_deref(),
            Some("conn.token_wo")
        );
        assert!(
            diag.detail.contains("conn.token_wo is write-only"),
            "{}",
            diag.detail
        );
        let wire = attribute(&Attribute::string("token_wo").optional().write_only());
        assert!(wire.write_only && wire.optional);
        assert!(!attribute(&Attribute::string("token").optional()).write_only);
    }

    #[test]
    fn deferral_respects_client() {
        let mut d = Diagnostics::new();
        let allowed = ClientCapabilities {
            deferral_allowed: true,
            ..Default::default()
        };
        assert!(deferred(Some(DeferredReason::AbsentPrereq), allowed, &mut d).is_some());
        assert!(d.is_empty());
        assert!(
            deferred(
                Some(DeferredReason::AbsentPrereq),
                ClientCapabilities::default(),
                &mut d
            )
            .is_none()
        );
        assert!(d.has_errors());
    }
}
