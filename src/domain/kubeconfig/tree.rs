//! The bounded YAML tree a kubeconfig is judged on: built from the parser's events under a budget (bytes, depth,
//! nodes after alias expansion), refusing every construct on which YAML 1.2 (this parser) and YAML 1.1 (go-yaml,
//! which client-go reads kubeconfigs with) can disagree: explicit tags (`!!binary` keys decode differently), merge
//! keys (`<<` in any style), the line separators U+0085, U+2028 and U+2029 (a line break to YAML 1.1, text to
//! 1.2), non-scalar keys, duplicate keys and multi-document streams. What the bridge writes is never these bytes
//! but a canonical document built from the tree (`super::canonical`); the refusals make sure the tree it is built
//! from is the one every reader sees.

use std::{collections::HashMap, fmt, rc::Rc};

use serde_saphyr::granit_parser::{self, Event, Options, Parser, ScalarStyle};

use super::{KubeconfigError, MAX_BYTES, MAX_DEPTH, MAX_NODES};

/// A node of the parsed document; aliased subtrees are shared, not copied.
pub(crate) enum Node {
    /// A scalar: its text, and whether it was written plain (unquoted).
    Scalar { text: String, plain: bool },
    /// A sequence.
    Seq(Vec<Rc<Node>>),
    /// A mapping, in document order.
    Map(Vec<(Rc<Node>, Rc<Node>)>),
}

impl fmt::Debug for Node {
    /// The shape only: scalars are document content.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Scalar { .. } => f.write_str("<scalar>"),
            Node::Seq(items) => f.debug_list().entries(items).finish(),
            Node::Map(entries) => f
                .debug_map()
                .entries(entries.iter().map(|(k, v)| (k, v)))
                .finish(),
        }
    }
}

impl Node {
    pub(crate) fn is_null(&self) -> bool {
        match self {
            Node::Scalar { text, plain: true } => {
                matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL")
            }
            Node::Scalar { text, plain: false } => text.is_empty(),
            _ => false,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Node::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The non-null values under keys equal to `key` without regard to ASCII case (for refusals: a reader that
    /// folds case must not find what an exact lookup missed).
    pub(crate) fn fields<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        let entries: &[(Rc<Node>, Rc<Node>)] = match self {
            Node::Map(entries) => entries,
            _ => &[],
        };
        entries.iter().filter_map(move |(k, v)| {
            (k.as_str().is_some_and(|k| k.eq_ignore_ascii_case(key)) && !v.is_null())
                .then_some(&**v)
        })
    }

    /// The non-null value under exactly `key` (client-go decodes kubeconfig fields case-sensitively; duplicate
    /// keys are refused when the tree is built).
    pub(crate) fn field(&self, key: &str) -> Option<&Node> {
        let Node::Map(entries) = self else {
            return None;
        };
        entries
            .iter()
            .find(|(k, v)| k.as_str() == Some(key) && !v.is_null())
            .map(|(_, v)| &**v)
    }

    pub(crate) fn items(&self) -> &[Rc<Node>] {
        match self {
            Node::Seq(items) => items,
            _ => &[],
        }
    }
}

/// An open collection while the tree is built.
enum Frame {
    Seq {
        anchor: usize,
        items: Vec<Rc<Node>>,
        size: usize,
    },
    Map {
        anchor: usize,
        entries: Vec<(Rc<Node>, Rc<Node>)>,
        key: Option<Rc<Node>>,
        size: usize,
        line: usize,
        column: usize,
    },
}

impl Frame {
    /// Adds a finished child of `size` expanded nodes. Returns whether it was a refused key (`<<` in any style, or
    /// a sequence or mapping used as a key).
    fn push(&mut self, node: Rc<Node>, size: usize) -> bool {
        match self {
            Frame::Seq { items, size: s, .. } => {
                items.push(node);
                *s = s.saturating_add(size);
                false
            }
            Frame::Map {
                entries,
                key,
                size: s,
                ..
            } => {
                *s = s.saturating_add(size);
                match key.take() {
                    Some(k) => {
                        entries.push((k, node));
                        false
                    }
                    None => {
                        let refused = match &*node {
                            Node::Scalar { text, .. } => text == "<<",
                            _ => true,
                        };
                        *key = Some(node);
                        refused
                    }
                }
            }
        }
    }
}

/// Builds the document tree under the budget.
pub(crate) fn parse(bytes: &[u8]) -> Result<Rc<Node>, KubeconfigError> {
    if bytes.len() > MAX_BYTES {
        return Err(KubeconfigError::TooLarge {
            size: bytes.len(),
            limit: MAX_BYTES,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|_| KubeconfigError::NotUtf8)?;
    if let Some(at) = text.find(['\u{85}', '\u{2028}', '\u{2029}']) {
        return Err(KubeconfigError::LineSeparator {
            line: text[..at].lines().count().max(1),
        });
    }
    let mut options = Options::default();
    options.set_emit_comments(false);
    // One more than ours, so that our own limit (with its own error) is reached first.
    options.flow_nesting_limit = MAX_DEPTH + 1;
    options.block_nesting_limit = MAX_DEPTH + 1;
    let mut parser = Parser::new_from_str_with_options(text, options);
    let mut tree = TreeBuilder::default();
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| scan_error(&e))?;
        tree.event(event, span.start.line(), span.start.col() + 1)?;
    }
    tree.root.ok_or(KubeconfigError::NotAMapping)
}

/// The error for a document the parser rejects.
fn scan_error(e: &granit_parser::ScanError) -> KubeconfigError {
    match e.kind() {
        granit_parser::ErrorKind::RecursionLimitExceeded => {
            KubeconfigError::TooDeep { limit: MAX_DEPTH }
        }
        _ => KubeconfigError::Syntax {
            line: e.marker().line(),
            column: e.marker().col() + 1,
        },
    }
}

/// The tree under construction from the parser's events, and the budget spent on it.
#[derive(Default)]
struct TreeBuilder {
    /// Anchored nodes by anchor id, with their expanded size.
    anchors: HashMap<usize, (Rc<Node>, usize)>,
    /// The collections opened and not yet closed, innermost last.
    stack: Vec<Frame>,
    /// The document's top node, once finished.
    root: Option<Rc<Node>>,
    /// Documents started.
    documents: usize,
    /// Expanded nodes so far.
    total: usize,
}

impl TreeBuilder {
    /// Counts `n` more expanded nodes against [`MAX_NODES`].
    fn charge(&mut self, n: usize) -> Result<(), KubeconfigError> {
        self.total = self.total.saturating_add(n);
        if self.total > MAX_NODES {
            Err(KubeconfigError::TooManyNodes { limit: MAX_NODES })
        } else {
            Ok(())
        }
    }

    /// Takes one event found at `line`/`column`.
    fn event(
        &mut self,
        event: Event<'_>,
        line: usize,
        column: usize,
    ) -> Result<(), KubeconfigError> {
        // A finished node: its anchor id (0 for none), the node and its expanded size.
        let (anchor, node, size) = match event {
            Event::DocumentStart(..) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(KubeconfigError::MultipleDocuments);
                }
                return Ok(());
            }
            Event::Scalar(_, _, _, Some(_))
            | Event::SequenceStart(_, _, Some(_))
            | Event::MappingStart(_, _, Some(_)) => {
                return Err(KubeconfigError::Tag { line });
            }
            Event::Scalar(text, style, anchor, None) => {
                self.charge(1)?;
                let plain = matches!(style, ScalarStyle::Plain);
                let text = text.into_owned();
                (anchor, Rc::new(Node::Scalar { text, plain }), 1)
            }
            Event::Alias(id) => {
                let (node, size) = self
                    .anchors
                    .get(&id)
                    .cloned()
                    .ok_or(KubeconfigError::BadAlias { line })?;
                self.charge(size)?;
                (0, node, size)
            }
            Event::SequenceStart(_, anchor, _) => {
                return self.open(Frame::Seq {
                    anchor,
                    items: Vec::new(),
                    size: 1,
                });
            }
            Event::MappingStart(_, anchor, _) => {
                return self.open(Frame::Map {
                    anchor,
                    entries: Vec::new(),
                    key: None,
                    size: 1,
                    line,
                    column,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(line, column)?,
            // Stream and document ends, and presentation-only events, carry no node.
            _ => return Ok(()),
        };
        if anchor != 0 {
            self.anchors.insert(anchor, (node.clone(), size));
        }
        match self.stack.last_mut() {
            Some(frame) => {
                if frame.push(node, size) {
                    return Err(KubeconfigError::RefusedKey { line });
                }
            }
            None => self.root = Some(node),
        }
        Ok(())
    }

    /// Opens a sequence or mapping.
    fn open(&mut self, frame: Frame) -> Result<(), KubeconfigError> {
        self.charge(1)?;
        if self.stack.len() >= MAX_DEPTH {
            return Err(KubeconfigError::TooDeep { limit: MAX_DEPTH });
        }
        self.stack.push(frame);
        Ok(())
    }

    /// Closes the innermost collection: its anchor id, node and expanded size.
    fn close(
        &mut self,
        line: usize,
        column: usize,
    ) -> Result<(usize, Rc<Node>, usize), KubeconfigError> {
        match self.stack.pop() {
            Some(Frame::Seq {
                anchor,
                items,
                size,
            }) => Ok((anchor, Rc::new(Node::Seq(items)), size)),
            Some(Frame::Map {
                anchor,
                entries,
                size,
                line,
                column,
                ..
            }) => {
                let mut seen = std::collections::HashSet::with_capacity(entries.len());
                if entries
                    .iter()
                    .filter_map(|(k, _)| k.as_str())
                    .any(|k| !seen.insert(k))
                {
                    return Err(KubeconfigError::DuplicateKey { line, column });
                }
                Ok((anchor, Rc::new(Node::Map(entries)), size))
            }
            None => Err(KubeconfigError::Syntax { line, column }),
        }
    }
}
