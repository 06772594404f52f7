//! Write-only attributes in a schema: where a schema may declare them, and finding them in a value (to null them
//! in every state a resource answers with, or to refuse them from a client that would store them).

use super::{
    Attribute, AttributePath, AttributeType, Block, BlockNesting, Nesting, PathStep, Value,
};

impl Block {
    /// Whether any attribute of this block, its nested attributes or its nested blocks is write-only.
    pub fn has_write_only(&self) -> bool {
        self.attributes.iter().any(Attribute::has_write_only)
            || self.blocks.iter().any(|b| b.block.has_write_only())
    }

    /// Sets every write-only attribute in `value` (a value of this block) to null, in place, and returns the
    /// paths of those that were not null. The plugin layer calls it on every state a resource answers with
    /// (planned, new, refreshed, imported, upgraded), so that no write-only value reaches state or plan whatever
    /// the resource does; only the parts of `value` under attributes and blocks that hold write-only attributes
    /// are visited.
    pub fn null_write_only(&self, value: &mut Value) -> Vec<AttributePath> {
        let mut nulled = Vec::new();
        walk_block(
            self,
            value,
            &mut AttributePath::root(),
            &mut |path, v: &mut Value| {
                if !v.is_null() {
                    nulled.push(path.clone());
                    *v = Value::Null;
                }
            },
        );
        nulled
    }

    /// The paths of the write-only attributes that are set (not null; unknown counts as set) in `value`, a value of
    /// this block such as a configuration. Paths stop at a set, whose elements have no key.
    pub fn write_only_set(&self, value: &Value) -> Vec<AttributePath> {
        if !self.has_write_only() {
            return Vec::new();
        }
        let mut copy = value.clone();
        self.null_write_only(&mut copy)
    }

    /// Problems with the write-only attributes of this block as a schema (`where` names the schema in the
    /// messages): a write-only attribute must be `optional` or `required` and must not be `computed`; when
    /// `allowed` is false (anything but a managed resource), none may be write-only at all.
    pub fn write_only_problems(&self, allowed: bool, what: &str) -> Vec<String> {
        let mut out = Vec::new();
        check_block(self, &mut AttributePath::root(), allowed, what, &mut out);
        out
    }
}

/// What a write-only walk does with one write-only attribute's value.
type OnWriteOnly<'f> = dyn FnMut(&AttributePath, &mut Value) + 'f;

/// Calls `f` on each element of `value`: `value` itself when `one`, else each element of a list (path step: its
/// index), set (no step: set elements have no key) or map (step: its key); null and unknown collections have none.
fn each_element(
    one: bool,
    value: &mut Value,
    path: &mut AttributePath,
    f: &mut dyn FnMut(&mut Value, &mut AttributePath),
) {
    if one {
        return f(value, path);
    }
    match value {
        Value::List(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                path.push(PathStep::KeyInt(i64::try_from(i).unwrap_or(i64::MAX)));
                f(item, path);
                path.pop();
            }
        }
        Value::Set(items) => items.iter_mut().for_each(|item| f(item, path)),
        Value::Map(items) => {
            for (k, item) in items.iter_mut() {
                path.push(PathStep::KeyString(k.clone()));
                f(item, path);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Calls `f` with the path and value of every write-only attribute present in `value`, an object of `attrs`.
fn walk_attributes(
    attrs: &[Attribute],
    value: &mut Value,
    path: &mut AttributePath,
    f: &mut OnWriteOnly<'_>,
) {
    let Value::Object(map) = value else {
        return;
    };
    for a in attrs.iter().filter(|a| a.has_write_only()) {
        let Some(v) = map.get_mut(&a.name) else {
            continue;
        };
        path.push(PathStep::Attribute(a.name.clone()));
        if a.write_only {
            f(path, v);
        } else if let AttributeType::Nested(n) = &a.kind {
            each_element(n.nesting == Nesting::Single, v, path, &mut |item, path| {
                walk_attributes(&n.attributes, item, path, f)
            });
        }
        path.pop();
    }
}

/// [`walk_attributes`] for a block: its attributes, then its nested blocks that hold write-only attributes.
fn walk_block(block: &Block, value: &mut Value, path: &mut AttributePath, f: &mut OnWriteOnly<'_>) {
    walk_attributes(&block.attributes, value, path, f);
    let Value::Object(map) = value else {
        return;
    };
    for b in block.blocks.iter().filter(|b| b.block.has_write_only()) {
        let Some(v) = map.get_mut(&b.type_name) else {
            continue;
        };
        let one = matches!(b.nesting, BlockNesting::Single | BlockNesting::Group);
        path.push(PathStep::Attribute(b.type_name.clone()));
        each_element(one, v, path, &mut |item, path| {
            walk_block(&b.block, item, path, f)
        });
        path.pop();
    }
}

/// See [`Block::write_only_problems`].
fn check_attributes(
    attrs: &[Attribute],
    path: &mut AttributePath,
    allowed: bool,
    what: &str,
    out: &mut Vec<String>,
) {
    for a in attrs {
        path.push(PathStep::Attribute(a.name.clone()));
        if a.write_only && !allowed {
            out.push(format!(
                "{what}: attribute {path} is write-only, which only managed resources may declare"
            ));
        } else if a.write_only && a.computed {
            out.push(format!(
                "{what}: attribute {path} is write-only and computed; a write-only attribute is never set by the provider"
            ));
        } else if a.write_only && !a.optional && !a.required {
            out.push(format!(
                "{what}: attribute {path} is write-only but neither optional nor required"
            ));
        }
        if let AttributeType::Nested(n) = &a.kind {
            check_attributes(&n.attributes, path, allowed, what, out);
        }
        path.pop();
    }
}

fn check_block(
    block: &Block,
    path: &mut AttributePath,
    allowed: bool,
    what: &str,
    out: &mut Vec<String>,
) {
    check_attributes(&block.attributes, path, allowed, what, out);
    for b in &block.blocks {
        path.push(PathStep::Attribute(b.type_name.clone()));
        check_block(&b.block, path, allowed, what, out);
        path.pop();
    }
}
