//! Renders the "Schema" section of a registry docs page (tfplugindocs layout) from a [`Schema`], so the docs
//! under `docs/` are generated from the provider's own schema. `tests/plugin/docs.rs` fails when a committed page
//! disagrees and rewrites the sections with `UPDATE_DOCS=1`.

use std::fmt::Write;

use crate::tfplugin::{
    Type,
    schema::{Attribute, AttributeType, Block, BlockNesting, NestedBlock, Nesting, Schema},
};

/// Marker opening a generated schema section.
pub const BEGIN: &str = "<!-- schema generated from the provider's schema by src/tfplugin/docs.rs (UPDATE_DOCS=1 cargo test --test plugin docs::) -->";
/// Marker closing a generated schema section.
pub const END: &str = "<!-- end of generated schema -->";

fn type_name(t: &Type) -> String {
    match t {
        Type::String => "String".into(),
        Type::Number => "Number".into(),
        Type::Bool => "Boolean".into(),
        Type::Dynamic => "Dynamic".into(),
        Type::List(e) => format!("List of {}", type_name(e)),
        Type::Set(e) => format!("Set of {}", type_name(e)),
        Type::Map(e) => format!("Map of {}", type_name(e)),
        Type::Object { .. } => "Object".into(),
        Type::Tuple(_) => "Tuple".into(),
    }
}

/// The object type inside a (possibly nested) collection type.
fn object_of(t: &Type) -> Option<&Type> {
    match t {
        Type::Object { .. } => Some(t),
        Type::List(e) | Type::Set(e) | Type::Map(e) => object_of(e),
        _ => None,
    }
}

struct Pending {
    anchor: String,
    title: String,
    body: Body,
}

enum Body {
    Block(Block),
    Nested(Vec<Attribute>, bool),
    Object(Type),
}

fn anchor(prefix: &str, parent: &str, name: &str) -> String {
    if parent.is_empty() {
        format!("{prefix}--{name}")
    } else {
        format!("{prefix}--{parent}--{name}")
    }
}

fn describe(a: &Attribute) -> String {
    let mut d = a.description.trim().to_string();
    if a.deprecated {
        let msg = if a.deprecation_message.is_empty() {
            "Deprecated."
        } else {
            a.deprecation_message.as_str()
        };
        d = format!("**Deprecated** {msg} {d}").trim().to_string();
    }
    d
}

fn attribute_line(a: &Attribute, parent: &str, pending: &mut Vec<Pending>) -> String {
    let sensitive = match (a.sensitive, a.write_only) {
        (true, true) => ", Sensitive, Write-only",
        (true, false) => ", Sensitive",
        (false, true) => ", Write-only",
        (false, false) => "",
    };
    let (kind, link) = match &a.kind {
        AttributeType::Type(t) => {
            let link = object_of(t).map(|o| {
                let id = anchor("nestedatt", parent, &a.name);
                pending.push(Pending {
                    anchor: id.clone(),
                    title: qualified(parent, &a.name),
                    body: Body::Object(o.clone()),
                });
                id
            });
            (type_name(t), link)
        }
        AttributeType::Nested(n) => {
            let id = anchor("nestedatt", parent, &a.name);
            pending.push(Pending {
                anchor: id.clone(),
                title: qualified(parent, &a.name),
                body: Body::Nested(
                    n.attributes.clone(),
                    a.computed && !a.optional && !a.required,
                ),
            });
            let kind = match n.nesting {
                Nesting::Single => "Attributes",
                Nesting::List => "Attributes List",
                Nesting::Set => "Attributes Set",
                Nesting::Map => "Attributes Map",
            };
            (kind.to_string(), Some(id))
        }
    };
    let mut line = format!("- `{}` ({kind}{sensitive})", a.name);
    let d = describe(a);
    if !d.is_empty() {
        let _ = write!(line, " {d}");
    }
    if let Some(id) = link {
        let _ = write!(line, " (see [below for nested schema](#{id}))");
    }
    line
}

fn qualified(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}.{name}")
    }
}

/// The line of a nested block (its nested schema is queued in `pending`, to be rendered below).
fn block_line(b: &NestedBlock, parent: &str, pending: &mut Vec<Pending>) -> String {
    let id = anchor("nestedblock", parent, &b.type_name);
    pending.push(Pending {
        anchor: id.clone(),
        title: qualified(parent, &b.type_name),
        body: Body::Block(b.block.clone()),
    });
    let nesting = match b.nesting {
        BlockNesting::Single | BlockNesting::Group => "Block",
        BlockNesting::List => "Block List",
        BlockNesting::Set => "Block Set",
        BlockNesting::Map => "Block Map",
    };
    let req = if b.min_items > 0 {
        "Required"
    } else {
        "Optional"
    };
    let max = if b.max_items > 0 {
        format!(", Max: {}", b.max_items)
    } else {
        String::new()
    };
    let mut line = format!("- `{}` ({nesting}, {req}{max})", b.type_name);
    let d = b.block.description.trim();
    if !d.is_empty() {
        let _ = write!(line, " {d}");
    }
    let _ = write!(line, " (see [below for nested schema](#{id}))");
    line
}

fn render_block(
    out: &mut String,
    block: &Block,
    parent: &str,
    level: &str,
    pending: &mut Vec<Pending>,
) {
    let mut required = Vec::new();
    let mut optional = Vec::new();
    let mut read_only = Vec::new();
    let mut attrs: Vec<&Attribute> = block.attributes.iter().collect();
    attrs.sort_by(|a, b| a.name.cmp(&b.name));
    let mut items: Vec<(String, String, u8)> = Vec::new();
    for a in attrs {
        let class = if a.required {
            0
        } else if a.optional {
            1
        } else {
            2
        };
        items.push((a.name.clone(), attribute_line(a, parent, pending), class));
    }
    for b in &block.blocks {
        items.push((
            b.type_name.clone(),
            block_line(b, parent, pending),
            if b.min_items > 0 { 0 } else { 1 },
        ));
    }
    items.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, line, class) in items {
        match class {
            0 => required.push(line),
            1 => optional.push(line),
            _ => read_only.push(line),
        }
    }
    for (title, lines) in [
        ("Required", required),
        ("Optional", optional),
        ("Read-Only", read_only),
    ] {
        if lines.is_empty() {
            continue;
        }
        if level.is_empty() {
            let _ = writeln!(out, "### {title}\n");
        } else {
            let _ = writeln!(out, "{title}:\n");
        }
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        out.push('\n');
    }
}

/// The generated schema section of a page, between [`BEGIN`] and [`END`].
pub fn schema_section(schema: &Schema) -> String {
    let mut out = format!("{BEGIN}\n## Schema\n\n");
    let mut pending = Vec::new();
    render_block(&mut out, &schema.block, "", "", &mut pending);
    let mut i = 0;
    while i < pending.len() {
        let p = Pending {
            anchor: pending[i].anchor.clone(),
            title: pending[i].title.clone(),
            body: match &pending[i].body {
                Body::Block(b) => Body::Block(b.clone()),
                Body::Nested(a, ro) => Body::Nested(a.clone(), *ro),
                Body::Object(t) => Body::Object(t.clone()),
            },
        };
        let _ = writeln!(
            out,
            "<a id=\"{}\"></a>\n### Nested Schema for `{}`\n",
            p.anchor, p.title
        );
        match p.body {
            Body::Block(b) => render_block(&mut out, &b, &p.title, "nested", &mut pending),
            Body::Nested(attrs, read_only) => {
                let block = Block {
                    attributes: attrs
                        .into_iter()
                        .map(|mut a| {
                            if read_only {
                                a.computed = true;
                                a.optional = false;
                                a.required = false;
                            }
                            a
                        })
                        .collect(),
                    ..Default::default()
                };
                render_block(&mut out, &block, &p.title, "nested", &mut pending);
            }
            Body::Object(Type::Object { attributes, .. }) => {
                let _ = writeln!(out, "Read-Only:\n");
                for (name, t) in &attributes {
                    let link = object_of(t).map(|o| {
                        let id = anchor("nestedobjatt", &p.title, name);
                        pending.push(Pending {
                            anchor: id.clone(),
                            title: qualified(&p.title, name),
                            body: Body::Object(o.clone()),
                        });
                        format!(" (see [below for nested schema](#{id}))")
                    });
                    let _ = writeln!(
                        out,
                        "- `{name}` ({}){}",
                        type_name(t),
                        link.unwrap_or_default()
                    );
                }
                out.push('\n');
            }
            Body::Object(_) => {}
        }
        i += 1;
    }
    let trimmed = out.trim_end().to_string();
    format!("{trimmed}\n{END}\n")
}

/// Replaces the generated section of `page` (or appends one) with `section`.
pub fn splice(page: &str, section: &str) -> String {
    match (page.find(BEGIN), page.find(END)) {
        (Some(b), Some(e)) if e > b => format!(
            "{}{}{}",
            &page[..b],
            section,
            page[e + END.len()..].trim_start_matches('\n')
        ),
        // A page whose section was written before the end marker existed: the section runs to the end.
        (Some(b), None) => format!("{}{}", &page[..b], section),
        _ => format!("{}\n\n{}", page.trim_end(), section),
    }
}
