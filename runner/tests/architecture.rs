//! The architecture ratchet: reads the workspace's own sources and checks the rules of
//! docs/architecture.md that the compiler does not.
//!
//! (a) nothing outside `runner/src/cmd/` imports from `cmd/` (the binary's root, `main.rs`,
//!     which declares the commands and dispatches to them, excepted);
//! (b) no circle of imports between the files of a crate;
//! (c) no file in `runner/src` over [`MAX_LINES`] lines outside its `#[cfg(test)]` items;
//! (d) `runner/src/cluster/` and the job contract (`runner/src/job.rs`) import no file of
//!     `runner/src/jobs/`: they know the kinds of job only through the contract
//!     ([`LAYERS`]; its violations are listed with (a)'s);
//! (e) the server (`runner/src/serve/`) knows the kinds only through the contract too: no
//!     file of it imports a kind's room (a folder `runner/src/jobs/KIND/`; the registry
//!     `jobs/mod.rs` and the contract are its way in), and none names a kind — no string
//!     literal outside its `#[cfg(test)]` items equals the command of a kind (the string
//!     literals in the body of a `fn command` under `runner/src/jobs/`).
//!
//! Known violations, while any are left, are listed in [`ALLOWED_CMD_IMPORTS`],
//! [`ALLOWED_CIRCLES`], [`ALLOWED_LONG_FILES`] and [`ALLOWED_SERVE_KINDS`]. The
//! test fails on any violation not listed there, and on a listed one that no longer occurs:
//! the lists can only shrink.
//!
//! How a file's imports are found: a small tokenizer (comments, strings and character
//! literals skipped) reads every path that starts with `crate`, `$crate`, `self` or
//! `super`, or with the name of a child module or of a name a `use` brought in, in `use`
//! trees (`use crate::{a, b::c}`) and inline in code (`crate::cmd::tune::f(…)`). A path
//! depends on the deepest module on it that exists; a name a module merely imports or
//! re-exports (`pub use x::Y`) is followed to where it comes from; `use crate::files;`
//! alone is no import, the paths through `files::` are. A submodule reaching up into a
//! module that encloses it (`super::MAX_PLY` in search/tt.rs, defined in search/mod.rs)
//! is the inside of one room, not an import; the enclosing module reaching down into its
//! submodules is. `#[cfg(test)]` items and test modules are left out. The modules of a
//! crate are found by walking its `mod` declarations from its root; a module file is
//! `x.rs` or `x/mod.rs`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// The most lines a runner file may have outside its `#[cfg(test)]` items.
const MAX_LINES: usize = 650;

/// Files outside `cmd/` that still import from `cmd/`: (importing file, imported file, why).
const ALLOWED_CMD_IMPORTS: &[(&str, &str, &str)] = &[];

/// (files under this prefix, may not import files under this one): `cluster/` and the job
/// contract know the kinds of job only through the contract (issue 30).
const LAYERS: &[(&str, &str)] = &[
    ("runner/src/cluster/", "runner/src/jobs/"),
    ("runner/src/job.rs", "runner/src/jobs/"),
];

/// The server's files that still know a kind other than through the contract: (file, the
/// kind's room file it imports or the `"command"` it names, why).
const ALLOWED_SERVE_KINDS: &[(&str, &str, &str)] = &[];

/// Circles of imports still there: (the files of the circle, sorted, why).
const ALLOWED_CIRCLES: &[(&[&str], &str)] = &[];

/// Runner files still over [`MAX_LINES`] lines outside their tests: (file, why).
const ALLOWED_LONG_FILES: &[(&str, &str)] = &[];

/// The crates checked: (folder, root file inside `src/`).
const CRATES: &[(&str, &str)] = &[
    ("engine", "lib.rs"),
    ("sprt", "lib.rs"),
    ("data", "lib.rs"),
    ("runner", "main.rs"),
];

// ---------------------------------------------------------------------------------------
// The tokenizer.

/// A token of Rust source: an identifier, one punctuation character (`::` as one), or a
/// string literal's text as written (escapes kept; [`tokenize_all`] only).
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Punct(&'static str),
    Str(String),
}

/// A token and the (1-based) line it starts on.
#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
}

/// The identifiers and punctuation of `src`; comments, string, byte-string, raw-string and
/// character literals, lifetimes and numbers are skipped.
fn tokenize(src: &str) -> Vec<Token> {
    let mut toks = tokenize_all(src);
    toks.retain(|t| !matches!(t.tok, Tok::Str(_)));
    toks
}

/// [`tokenize`]'s tokens with the string literals (normal, byte, C and raw) among them.
fn tokenize_all(src: &str) -> Vec<Token> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let is_ident_start = |ch: char| ch.is_alphabetic() || ch == '_';
    let is_ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    // Skips to just past the closing quote of a (non-raw) string that opens at `i`.
    let skip_string = |i: &mut usize, line: &mut usize| {
        *i += 1;
        while *i < c.len() && c[*i] != '"' {
            if c[*i] == '\\' {
                *i += 1;
            }
            if *i < c.len() && c[*i] == '\n' {
                *line += 1;
            }
            *i += 1;
        }
        *i += 1;
    };
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied().unwrap_or('\0');
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && next == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' || ((ch == 'b' || ch == 'c') && next == '"') {
            if ch != '"' {
                i += 1;
            }
            let (start, first) = (i + 1, line);
            skip_string(&mut i, &mut line);
            out.push(Token {
                tok: Tok::Str(c[start..(i - 1).max(start).min(c.len())].iter().collect()),
                line: first,
            });
        } else if (ch == 'r' || ((ch == 'b' || ch == 'c') && next == 'r')) && {
            // A raw string: r"…", r#"…"#, br"…", cr#"…"#.
            let mut j = if ch == 'r' { i + 1 } else { i + 2 };
            while c.get(j) == Some(&'#') {
                j += 1;
            }
            c.get(j) == Some(&'"')
        } {
            let mut j = if ch == 'r' { i + 1 } else { i + 2 };
            let mut hashes = 0;
            while c[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            let (start, mut end, first) = (j, c.len(), line);
            loop {
                if j >= c.len() {
                    break;
                }
                if c[j] == '"' && (0..hashes).all(|k| c.get(j + 1 + k) == Some(&'#')) {
                    end = j;
                    j += 1 + hashes;
                    break;
                }
                if c[j] == '\n' {
                    line += 1;
                }
                j += 1;
            }
            out.push(Token {
                tok: Tok::Str(c[start..end.max(start)].iter().collect()),
                line: first,
            });
            i = j;
        } else if ch == 'r' && next == '#' && c.get(i + 2).is_some_and(|&d| is_ident_start(d)) {
            // A raw identifier.
            let start = i + 2;
            i = start;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(c[start..i].iter().collect()),
                line,
            });
        } else if ch == '\'' {
            if next == '\\' {
                // An escaped character literal: past the quote, the backslash and the
                // character it escapes, then to the closing quote.
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                // A lifetime or a label.
                i += 1;
                while i < c.len() && is_ident(c[i]) {
                    i += 1;
                }
            }
        } else if ch.is_ascii_digit() {
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
        } else if is_ident_start(ch) {
            let start = i;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(c[start..i].iter().collect()),
                line,
            });
        } else if ch == ':' && next == ':' {
            out.push(Token {
                tok: Tok::Punct("::"),
                line,
            });
            i += 2;
        } else {
            const PUNCT: &[&str] = &[
                "{", "}", "(", ")", "[", "]", ";", ",", "#", "!", "$", "*", "<", ">", ":", "=",
            ];
            let s = ch.to_string();
            let tok = PUNCT
                .iter()
                .find(|p| **p == s)
                .map(|p| Tok::Punct(p))
                .unwrap_or(Tok::Punct("."));
            out.push(Token { tok, line });
            i += 1;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// One file's structure: its child modules, its imports, its paths, its test lines.

/// A path read from a file, as written: its first segment and the rest.
#[derive(Debug, Clone)]
struct RawPath {
    /// The module (file module plus inline modules) it was written in, relative to the file.
    inline: Vec<String>,
    /// The segments as written (`crate`, `super`, `self` included; `$crate` as `crate`).
    segs: Vec<String>,
    /// The name a `use` leaf brings into scope (its last segment or its `as` name); `None`
    /// for a path in code or a glob.
    imports: Option<String>,
}

/// What one source file holds, as far as this test cares.
#[derive(Debug, Default)]
struct FileFacts {
    /// Child module files declared here (`mod x;`), with the inline modules they sit in.
    children: Vec<(Vec<String>, String)>,
    /// Inline modules (`mod x { … }`) outside tests, as paths relative to the file.
    inline_mods: Vec<Vec<String>>,
    /// Every path that may name a module of the crate.
    paths: Vec<RawPath>,
    /// Lines inside `#[cfg(test)]` items.
    test_lines: usize,
}

fn ident(t: Option<&Token>) -> Option<&str> {
    match t {
        Some(Token {
            tok: Tok::Ident(s), ..
        }) => Some(s),
        _ => None,
    }
}

fn is(t: Option<&Token>, p: &str) -> bool {
    matches!(t, Some(Token { tok: Tok::Punct(q), .. }) if *q == p)
}

/// Index just past the bracketed group that opens at `i` (`(`, `[` or `{`).
fn skip_group(toks: &[Token], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < toks.len() {
        if let Tok::Punct(p) = toks[i].tok {
            match p {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    i
}

/// Index just past the item that starts at `i`: its `;` or its closing brace.
fn skip_item(toks: &[Token], mut i: usize) -> usize {
    while i < toks.len() {
        match toks[i].tok {
            Tok::Punct(";") => return i + 1,
            Tok::Punct("{") => {
                let end = skip_group(toks, i);
                return if is(toks.get(end), ";") { end + 1 } else { end };
            }
            Tok::Punct("(") | Tok::Punct("[") => i = skip_group(toks, i),
            _ => i += 1,
        }
    }
    i
}

/// Reads the path tree that continues at `i` (just past a `::`) below `prefix`, pushing its
/// leaves; returns the index past it.
fn read_tree(
    toks: &[Token],
    mut i: usize,
    prefix: Vec<String>,
    in_use: bool,
    inline: &[String],
    out: &mut Vec<RawPath>,
) -> usize {
    let mut segs = prefix;
    loop {
        if is(toks.get(i), "{") {
            i += 1;
            while i < toks.len() && !is(toks.get(i), "}") {
                if is(toks.get(i), ",") {
                    i += 1;
                    continue;
                }
                if ident(toks.get(i)) == Some("self") && !is(toks.get(i + 1), "::") {
                    // `use a::{self, …}`: the module a itself.
                    let mut name = segs.last().cloned();
                    i += 1;
                    if ident(toks.get(i)) == Some("as") {
                        name = ident(toks.get(i + 1)).map(str::to_string);
                        i += 2;
                    }
                    out.push(RawPath {
                        inline: inline.to_vec(),
                        segs: segs.clone(),
                        imports: name,
                    });
                    continue;
                }
                let before = i;
                i = read_tree(toks, i, segs.clone(), in_use, inline, out);
                if i == before {
                    i += 1;
                }
            }
            return i + 1;
        }
        if is(toks.get(i), "*") {
            out.push(RawPath {
                inline: inline.to_vec(),
                segs,
                imports: None,
            });
            return i + 1;
        }
        match ident(toks.get(i)) {
            Some(s) => {
                segs.push(s.to_string());
                i += 1;
                if is(toks.get(i), "::") {
                    i += 1;
                    continue;
                }
                let mut name = in_use.then(|| s.to_string());
                if in_use && ident(toks.get(i)) == Some("as") {
                    name = ident(toks.get(i + 1)).map(str::to_string);
                    i += 2;
                }
                out.push(RawPath {
                    inline: inline.to_vec(),
                    segs,
                    imports: name,
                });
                return i;
            }
            None => {
                // `crate::x::<T>` or a path cut short: what was read so far.
                if !segs.is_empty() {
                    out.push(RawPath {
                        inline: inline.to_vec(),
                        segs,
                        imports: None,
                    });
                }
                return i;
            }
        }
    }
}

/// Whether `#[cfg(test)]` starts at `i`.
fn is_cfg_test(toks: &[Token], i: usize) -> bool {
    is(toks.get(i), "#")
        && is(toks.get(i + 1), "[")
        && ident(toks.get(i + 2)) == Some("cfg")
        && is(toks.get(i + 3), "(")
        && ident(toks.get(i + 4)) == Some("test")
        && is(toks.get(i + 5), ")")
        && is(toks.get(i + 6), "]")
}

/// Reads one file's modules, paths and test lines.
fn file_facts(src: &str) -> FileFacts {
    let toks = tokenize(src);
    let mut facts = FileFacts::default();
    // Inline modules open here: (name, index of the token past their closing brace).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut in_use = false;
    let mut i = 0;
    while i < toks.len() {
        while inline.last().is_some_and(|(_, end)| i >= *end) {
            inline.pop();
        }
        let scope: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
        if is_cfg_test(&toks, i) {
            let start = toks[i].line;
            let mut j = i + 7;
            while is(toks.get(j), "#") {
                j = skip_group(&toks, j + 1);
            }
            let end = skip_item(&toks, j);
            let last = toks[end.saturating_sub(1).max(j)].line;
            facts.test_lines += last - start + 1;
            i = end;
            continue;
        }
        if is(toks.get(i), "#")
            && (is(toks.get(i + 1), "[") || is(toks.get(i + 1), "!") && is(toks.get(i + 2), "["))
        {
            // Another attribute: skip it (its paths are not imports).
            let j = if is(toks.get(i + 1), "!") {
                i + 2
            } else {
                i + 1
            };
            i = skip_group(&toks, j);
            continue;
        }
        match ident(toks.get(i)) {
            Some("mod")
                if ident(toks.get(i + 1)).is_some() && !is(toks.get(i.wrapping_sub(1)), "::") =>
            {
                let name = ident(toks.get(i + 1)).unwrap().to_string();
                if is(toks.get(i + 2), ";") {
                    facts.children.push((scope.clone(), name));
                    i += 3;
                } else if is(toks.get(i + 2), "{") {
                    let end = skip_group(&toks, i + 2);
                    let mut path = scope.clone();
                    path.push(name.clone());
                    facts.inline_mods.push(path);
                    inline.push((name, end));
                    i += 3;
                } else {
                    i += 1;
                }
                continue;
            }
            Some("use") => {
                in_use = true;
                i += 1;
                continue;
            }
            _ => {}
        }
        if is(toks.get(i), ";") || is(toks.get(i), "{") || is(toks.get(i), "}") {
            in_use = false;
        }
        if ident(toks.get(i)) == Some("pub")
            && is(toks.get(i + 1), "(")
            && ident(toks.get(i + 2)) == Some("in")
        {
            // `pub(in crate::a)` limits who sees an item: no import.
            i = skip_group(&toks, i + 1);
            continue;
        }
        // The start of a path: not itself after `::`, followed by `::`.
        let after_sep = i > 0 && is(toks.get(i - 1), "::");
        if let Some(first) = ident(toks.get(i)) {
            if !after_sep && (is(toks.get(i + 1), "::") || in_use) {
                let before = facts.paths.len();
                let end = read_tree(&toks, i, Vec::new(), in_use, &scope, &mut facts.paths);
                if first == "self" && !is(toks.get(i + 1), "::") {
                    // `self.x`, `&self`: not a path.
                    facts.paths.truncate(before);
                    i += 1;
                    continue;
                }
                i = end.max(i + 1);
                continue;
            }
        }
        i += 1;
    }
    facts
}

/// The string literals of `src` outside its `#[cfg(test)]` items, with their lines.
fn literals(src: &str) -> Vec<(String, usize)> {
    let toks = tokenize_all(src);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if is_cfg_test(&toks, i) {
            let mut j = i + 7;
            while is(toks.get(j), "#") {
                j = skip_group(&toks, j + 1);
            }
            i = skip_item(&toks, j);
            continue;
        }
        if let Tok::Str(s) = &toks[i].tok {
            out.push((s.clone(), toks[i].line));
        }
        i += 1;
    }
    out
}

/// The commands of the kinds of job: the string literals in the body of each `fn command`
/// of a file under `runner/src/jobs/` (`if self.sprt { "sprt" } else { "match" }` is two).
fn kind_commands(sources: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let jobs = sources
        .iter()
        .filter(|(f, _)| f.starts_with("runner/src/jobs/"));
    for (_, src) in jobs {
        let toks = tokenize_all(src);
        for i in 0..toks.len() {
            if ident(toks.get(i)) != Some("fn") || ident(toks.get(i + 1)) != Some("command") {
                continue;
            }
            let Some(open) =
                (i..toks.len()).find(|&k| is(toks.get(k), "{") || is(toks.get(k), ";"))
            else {
                continue;
            };
            if is(toks.get(open), "{") {
                for t in &toks[open..skip_group(&toks, open)] {
                    if let Tok::Str(s) = &t.tok {
                        out.insert(s.clone());
                    }
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// A crate: its modules, the file each lives in, and the file graph.

/// A path as written, with the module it was written in: (that module from the crate
/// root, the path's segments, the name it imports if it is a `use` leaf).
type Scoped = (Vec<String>, Vec<String>, Option<String>);

/// A crate's files and the imports between them.
#[derive(Debug, Default)]
struct CrateGraph {
    /// Each module (as its path from the crate root) and the file that holds it.
    modules: BTreeMap<Vec<String>, String>,
    /// Each file's facts.
    files: BTreeMap<String, FileFacts>,
    /// The module path of each file.
    file_module: BTreeMap<String, Vec<String>>,
    /// For each module, the names its `use` items bring in and their absolute paths.
    imports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
    /// Each file and the other files of the crate it depends on.
    edges: BTreeMap<String, BTreeSet<String>>,
}

/// The crate whose root is `root` among `sources` (file path → text; paths use `/`).
fn crate_graph(root: &str, sources: &BTreeMap<String, String>) -> CrateGraph {
    let mut g = CrateGraph::default();
    // Walk the `mod` declarations from the root.
    let mut queue = VecDeque::from([(root.to_string(), Vec::<String>::new())]);
    while let Some((file, module)) = queue.pop_front() {
        let Some(src) = sources.get(&file) else {
            continue;
        };
        let facts = file_facts(src);
        g.modules.insert(module.clone(), file.clone());
        let (dir, stem) = file.rsplit_once('/').unwrap_or(("", file.as_str()));
        let owns_dir = matches!(stem, "mod.rs" | "lib.rs" | "main.rs");
        let base = if owns_dir {
            dir.to_string()
        } else {
            format!("{dir}/{}", stem.trim_end_matches(".rs"))
        };
        for inline in &facts.inline_mods {
            let mut m = module.clone();
            m.extend(inline.iter().cloned());
            g.modules.insert(m, file.clone());
        }
        for (scope, name) in &facts.children {
            let mut sub = base.clone();
            for s in scope {
                sub = format!("{sub}/{s}");
            }
            let flat = format!("{sub}/{name}.rs");
            let nested = format!("{sub}/{name}/mod.rs");
            let child = if sources.contains_key(&flat) {
                flat
            } else {
                nested
            };
            let mut m = module.clone();
            m.extend(scope.iter().cloned());
            m.push(name.clone());
            queue.push_back((child, m));
        }
        g.file_module.insert(file.clone(), module);
        g.files.insert(file, facts);
    }
    // Every path of each file with the module it was written in.
    let mut absolute: BTreeMap<String, Vec<Scoped>> = BTreeMap::new();
    for (file, facts) in &g.files {
        let module = &g.file_module[file];
        for p in &facts.paths {
            let mut scope = module.clone();
            scope.extend(p.inline.iter().cloned());
            absolute.entry(file.clone()).or_default().push((
                scope.clone(),
                p.segs.clone(),
                p.imports.clone(),
            ));
        }
    }
    // The names each module's `use` items bring in (paths rooted at crate/self/super or a
    // child module only; a name from another crate is not followed).
    for entries in absolute.values() {
        for (scope, segs, name) in entries {
            if let (Some(name), Some(abs)) = (name, g.rooted(scope, segs)) {
                g.imports
                    .entry(scope.clone())
                    .or_default()
                    .insert(name.clone(), abs);
            }
        }
    }
    // The edges.
    for file in g.files.keys() {
        let module = &g.file_module[file];
        let mut deps = BTreeSet::new();
        for (scope, segs, name) in absolute.get(file).into_iter().flatten() {
            let Some(abs) = g
                .rooted(scope, segs)
                .or_else(|| g.through_import(scope, segs))
            else {
                continue;
            };
            if name.is_some() && g.modules.contains_key(&abs) {
                // `use crate::files;` names a module: the paths through the name count.
                continue;
            }
            let Some(target) = g.resolve(&abs, 0) else {
                continue;
            };
            // A submodule reaching up into a module that encloses it is the room's inside.
            let up = g.file_module[&target].len() < module.len()
                && module.starts_with(&g.file_module[&target]);
            if &target != file && !up {
                deps.insert(target);
            }
        }
        g.edges.insert(file.clone(), deps);
    }
    g
}

impl CrateGraph {
    /// `segs`, written in module `scope`, as a path from the crate root, if it starts with
    /// `crate`, `self`, `super` or a child module of `scope`.
    fn rooted(&self, scope: &[String], segs: &[String]) -> Option<Vec<String>> {
        let first = segs.first()?;
        let mut abs: Vec<String>;
        let mut rest = &segs[1..];
        match first.as_str() {
            "crate" => abs = Vec::new(),
            "self" => abs = scope.to_vec(),
            "super" => {
                abs = scope.to_vec();
                abs.pop()?;
                while rest.first().map(String::as_str) == Some("super") {
                    abs.pop()?;
                    rest = &rest[1..];
                }
            }
            _ => {
                let mut child = scope.to_vec();
                child.push(first.clone());
                if !self.modules.contains_key(&child) {
                    return None;
                }
                abs = child;
            }
        }
        abs.extend(rest.iter().cloned());
        Some(abs)
    }

    /// `segs`, written in `scope`, whose first segment is a name a `use` brought in.
    fn through_import(&self, scope: &[String], segs: &[String]) -> Option<Vec<String>> {
        let target = self.imports.get(scope)?.get(segs.first()?)?;
        let mut abs = target.clone();
        abs.extend(segs[1..].iter().cloned());
        Some(abs)
    }

    /// The file an absolute path depends on: its deepest module, or, where the next
    /// segment is a name that module imports, where that name comes from.
    fn resolve(&self, abs: &[String], depth: usize) -> Option<String> {
        for k in (0..=abs.len()).rev() {
            let Some(file) = self.modules.get(&abs[..k]) else {
                continue;
            };
            if depth < 8 && k < abs.len() {
                if let Some(target) = self.imports.get(&abs[..k]).and_then(|m| m.get(&abs[k])) {
                    if target.as_slice() != abs {
                        let mut next = target.clone();
                        next.extend(abs[k + 1..].iter().cloned());
                        return self.resolve(&next, depth + 1);
                    }
                }
            }
            return Some(file.clone());
        }
        None
    }
}

// ---------------------------------------------------------------------------------------
// Circles: strongly connected components and one circle through each.

/// The groups of files that import each other in a circle (components of more than one
/// file), each sorted, with one circle through it (first file repeated at the end).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<(Vec<String>, Vec<String>)> {
    // Tarjan's algorithm, iterative.
    let nodes: Vec<&String> = edges.keys().collect();
    let index_of: BTreeMap<&String, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            edges[*n]
                .iter()
                .filter_map(|m| index_of.get(m).copied())
                .collect()
        })
        .collect();
    let n = nodes.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next_index = 0;
    let mut components = Vec::new();
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        while let Some(&mut (v, ref mut pos)) = work.last_mut() {
            if *pos == 0 && index[v] == usize::MAX {
                index[v] = next_index;
                low[v] = next_index;
                next_index += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if *pos < succ[v].len() {
                let w = succ[v][*pos];
                *pos += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                loop {
                    let w = stack.pop().unwrap();
                    on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    components.push(comp);
                }
            }
        }
    }
    let mut out: Vec<(Vec<String>, Vec<String>)> = components
        .into_iter()
        .map(|comp| {
            let members: BTreeSet<usize> = comp.iter().copied().collect();
            // The shortest circle through the component's first file (breadth first).
            let first = *members.iter().min_by_key(|&&i| nodes[i]).unwrap();
            let mut prev: BTreeMap<usize, usize> = BTreeMap::new();
            let mut queue = VecDeque::from([first]);
            let mut last = None;
            'search: while let Some(v) = queue.pop_front() {
                for &w in &succ[v] {
                    if !members.contains(&w) {
                        continue;
                    }
                    if w == first {
                        last = Some(v);
                        break 'search;
                    }
                    if let std::collections::btree_map::Entry::Vacant(e) = prev.entry(w) {
                        e.insert(v);
                        queue.push_back(w);
                    }
                }
            }
            let mut path = vec![first];
            let mut v = last.unwrap();
            while v != first {
                path.push(v);
                v = prev[&v];
            }
            path[1..].reverse();
            path.push(first);
            let mut sorted: Vec<String> = comp.iter().map(|&i| nodes[i].clone()).collect();
            sorted.sort();
            (sorted, path.iter().map(|&i| nodes[i].clone()).collect())
        })
        .collect();
    out.sort();
    out
}

// ---------------------------------------------------------------------------------------
// The checks over the workspace.

/// One rule broken: its key in the allowlists and the line that describes it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Violation {
    key: String,
    line: String,
}

/// Every `.rs` file under `dir`, keyed by its path relative to `base` (with `/`).
fn read_sources(base: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            read_sources(base, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(base).unwrap();
            let key = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.insert(key, std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// The violations of the three rules in the crates of `sources`.
fn violations(
    sources: &BTreeMap<String, String>,
    crates: &[(&str, &str)],
) -> (Vec<Violation>, Vec<Violation>, Vec<Violation>) {
    let (mut cmd, mut circ, mut long) = (Vec::new(), Vec::new(), Vec::new());
    for (name, root) in crates {
        let g = crate_graph(&format!("{name}/src/{root}"), sources);
        if *name == "runner" {
            let cmd_dir = "runner/src/cmd/";
            for (file, deps) in &g.edges {
                if file.starts_with(cmd_dir) || file == "runner/src/main.rs" {
                    continue;
                }
                for dep in deps.iter().filter(|d| d.starts_with(cmd_dir)) {
                    cmd.push(Violation {
                        key: format!("{file} {dep}"),
                        line: format!("imports from cmd/: {file} → {dep}"),
                    });
                }
            }
            // The job contract's direction: the generic rooms know jobs only through it.
            for (from, to) in LAYERS {
                for (file, deps) in g.edges.iter().filter(|(f, _)| f.starts_with(from)) {
                    for dep in deps.iter().filter(|d| d.starts_with(to)) {
                        cmd.push(Violation {
                            key: format!("{file} {dep}"),
                            line: format!(
                                "imports a job kind: {file} → {dep} ({from} knows jobs only \
                                 through the job contract, runner/src/job.rs)"
                            ),
                        });
                    }
                }
            }
            for (file, facts) in &g.files {
                let lines = sources[file].lines().count() - facts.test_lines;
                if lines > MAX_LINES {
                    long.push(Violation {
                        key: file.clone(),
                        line: format!(
                            "too long: {file} has {lines} lines outside its tests \
                             (at most {MAX_LINES})"
                        ),
                    });
                }
            }
        }
        for (members, circle) in circles(&g.edges) {
            let mut line = format!("circle of imports: {}", circle.join(" → "));
            if members.len() + 1 > circle.len() {
                line.push_str(&format!(" (all of: {})", members.join(", ")));
            }
            circ.push(Violation {
                key: members.join(" "),
                line,
            });
        }
    }
    (cmd, circ, long)
}

/// The violations of rule (e) in `sources` (the runner's files among them): each server
/// file's imports of a kind's room, and each kind it names.
fn serve_kinds(sources: &BTreeMap<String, String>) -> Vec<Violation> {
    const SERVE: &str = "runner/src/serve/";
    const JOBS: &str = "runner/src/jobs/";
    let g = crate_graph("runner/src/main.rs", sources);
    let commands = kind_commands(sources);
    let mut out = Vec::new();
    for (file, deps) in g.edges.iter().filter(|(f, _)| f.starts_with(SERVE)) {
        let rooms = deps
            .iter()
            .filter(|d| d.strip_prefix(JOBS).is_some_and(|rest| rest.contains('/')));
        for dep in rooms {
            out.push(Violation {
                key: format!("{file} {dep}"),
                line: format!(
                    "the server imports a kind's room: {file} → {dep} (serve/ knows the kinds \
                     only through the job contract and jobs/mod.rs)"
                ),
            });
        }
    }
    for (file, src) in sources.iter().filter(|(f, _)| f.starts_with(SERVE)) {
        let mut named: BTreeMap<&String, usize> = BTreeMap::new();
        for (text, line) in literals(src) {
            if let Some(c) = commands.get(&text) {
                named.entry(c).or_insert(line);
            }
        }
        for (command, line) in named {
            out.push(Violation {
                key: format!("{file} \"{command}\""),
                line: format!(
                    "the server names a kind: {file}:{line} says \"{command}\" (serve/ asks the \
                     job contract, not a kind's name)"
                ),
            });
        }
    }
    out
}

/// Compares what was found against what is allowed: the lines of the new violations and of
/// the allowlist entries that no longer occur.
fn compare(found: &[Violation], allowed: &[String], what: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for v in found {
        if !allowed.contains(&v.key) {
            problems.push(format!("NEW {}", v.line));
        }
    }
    for key in allowed {
        if !found.iter().any(|v| &v.key == key) {
            problems.push(format!(
                "FIXED, remove it from {what} in runner/tests/architecture.rs: {key}"
            ));
        }
    }
    problems
}

#[test]
fn the_workspace_keeps_its_architecture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut sources = BTreeMap::new();
    for (name, _) in CRATES {
        read_sources(root, &root.join(name).join("src"), &mut sources);
    }
    let (cmd, circ, long) = violations(&sources, CRATES);
    let kinds = serve_kinds(&sources);
    for v in cmd.iter().chain(&circ).chain(&long).chain(&kinds) {
        println!("{}", v.line);
    }
    let allowed_cmd: Vec<String> = ALLOWED_CMD_IMPORTS
        .iter()
        .map(|(a, b, _)| format!("{a} {b}"))
        .collect();
    let allowed_circ: Vec<String> = ALLOWED_CIRCLES
        .iter()
        .map(|(files, _)| {
            let mut f = files.to_vec();
            f.sort();
            f.join(" ")
        })
        .collect();
    let allowed_long: Vec<String> = ALLOWED_LONG_FILES
        .iter()
        .map(|(f, _)| f.to_string())
        .collect();
    let mut problems = compare(&cmd, &allowed_cmd, "ALLOWED_CMD_IMPORTS");
    problems.extend(compare(&circ, &allowed_circ, "ALLOWED_CIRCLES"));
    problems.extend(compare(&long, &allowed_long, "ALLOWED_LONG_FILES"));
    let allowed_kinds: Vec<String> = ALLOWED_SERVE_KINDS
        .iter()
        .map(|(f, what, _)| format!("{f} {what}"))
        .collect();
    problems.extend(compare(&kinds, &allowed_kinds, "ALLOWED_SERVE_KINDS"));
    assert!(
        problems.is_empty(),
        "the architecture of docs/architecture.md is broken:\n{}",
        problems.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// The checker's own tests, on made-up crates.

/// A made-up crate from (path, text) pairs.
fn made_up(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(p, s)| (p.to_string(), s.to_string()))
        .collect()
}

fn deps_of(g: &CrateGraph, file: &str) -> Vec<String> {
    g.edges[file].iter().cloned().collect()
}

#[test]
fn groups_and_inline_paths_resolve_to_files() {
    let src = made_up(&[
        ("c/src/lib.rs", "mod a;\nmod b;\nmod cmd;\nmod user;\n"),
        ("c/src/a.rs", "pub fn f() {}\n"),
        ("c/src/b/mod.rs", "pub mod c;\npub struct B;\n"),
        ("c/src/b/c.rs", "pub struct C;\n"),
        ("c/src/cmd/mod.rs", "pub mod tune;\n"),
        ("c/src/cmd/tune.rs", "pub fn verdict_line() {}\n"),
        (
            "c/src/user.rs",
            "use crate::{a, b::c::C};\n\
             fn g() { let x = crate::cmd::tune::verdict_line(); a::f(); }\n",
        ),
    ]);
    let g = crate_graph("c/src/lib.rs", &src);
    assert_eq!(
        deps_of(&g, "c/src/user.rs"),
        ["c/src/a.rs", "c/src/b/c.rs", "c/src/cmd/tune.rs"]
    );
}

#[test]
fn super_self_and_child_paths_resolve() {
    let src = made_up(&[
        ("c/src/lib.rs", "mod x;\nmod a;\n"),
        ("c/src/x.rs", "pub struct X;\n"),
        ("c/src/a/mod.rs", "mod b;\nmod y;\nfn f() { b::g(); }\n"),
        ("c/src/a/y.rs", "pub fn g() {}\n"),
        (
            "c/src/a/b/mod.rs",
            "mod c;\nuse self::c::Y;\npub fn g() {}\n",
        ),
        (
            "c/src/a/b/c.rs",
            "use super::super::super::x::X;\npub struct Y;\n\
             fn h() { super::super::f(); super::super::y::g(); }\n",
        ),
    ]);
    let g = crate_graph("c/src/lib.rs", &src);
    // `super::super::f()` reaches up into a/mod.rs, which encloses c.rs: not an import.
    assert_eq!(
        deps_of(&g, "c/src/a/b/c.rs"),
        ["c/src/a/y.rs", "c/src/x.rs"]
    );
    assert_eq!(deps_of(&g, "c/src/a/b/mod.rs"), ["c/src/a/b/c.rs"]);
    assert_eq!(deps_of(&g, "c/src/a/mod.rs"), ["c/src/a/b/mod.rs"]);
    assert!(circles(&g.edges).is_empty());
}

#[test]
fn re_exports_and_imported_modules_are_followed() {
    let src = make_reexport_crate();
    let g = crate_graph("c/src/lib.rs", &src);
    // `crate::types::Square` is square.rs's, re-exported by types/mod.rs.
    assert_eq!(deps_of(&g, "c/src/board.rs"), ["c/src/types/square.rs"]);
    // `use crate::types; types::color::Color` reaches color.rs.
    assert_eq!(deps_of(&g, "c/src/game.rs"), ["c/src/types/color.rs"]);
    // The re-export itself is an import of the child.
    assert_eq!(deps_of(&g, "c/src/types/mod.rs"), ["c/src/types/square.rs"]);
}

fn make_reexport_crate() -> BTreeMap<String, String> {
    made_up(&[
        ("c/src/lib.rs", "mod types;\nmod board;\nmod game;\n"),
        (
            "c/src/types/mod.rs",
            "pub mod color;\nmod square;\npub use square::Square;\n",
        ),
        ("c/src/types/color.rs", "pub enum Color {}\n"),
        (
            "c/src/types/square.rs",
            "pub struct Square;\nimpl Square { fn f(&self) { self.g(); } }\n",
        ),
        ("c/src/board.rs", "use crate::types::Square;\n"),
        (
            "c/src/game.rs",
            "use crate::types;\nfn f() -> types::color::Color { todo!() }\n",
        ),
    ])
}

#[test]
fn comments_strings_and_tests_are_not_imports() {
    let src = made_up(&[
        ("c/src/lib.rs", "mod a;\nmod b;\n"),
        ("c/src/a.rs", "pub fn f() {}\n"),
        (
            "c/src/b.rs",
            "// crate::a::f\n/* crate::a::f /* nested */ crate::a */\n\
             /// [`crate::a::f`]\n\
             const S: &str = \"crate::a::f\";\nconst R: &str = r#\"crate::a::f\"#;\n\
             const C: char = '\"'; const L: &'static str = \"\";\n\
             #[cfg(test)]\nmod tests {\n    use crate::a::f;\n}\n\
             #[cfg(test)]\nmod more;\n\
             pub(in crate::a) fn g() {}\n",
        ),
        ("c/src/b/more.rs", "use crate::a::f;\n"),
    ]);
    let g = crate_graph("c/src/lib.rs", &src);
    assert!(deps_of(&g, "c/src/b.rs").is_empty(), "{:?}", g.edges);
    assert!(!g.files.contains_key("c/src/b/more.rs"));
    // The test module's 4 lines and the `mod more;` item's 2 lines are test lines.
    assert_eq!(g.files["c/src/b.rs"].test_lines, 6);
}

#[test]
fn circles_are_found_and_drawn() {
    let graph = |pairs: &[(&str, &str)]| {
        let mut e: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            e.entry(a.to_string()).or_default().insert(b.to_string());
            e.entry(b.to_string()).or_default();
        }
        e
    };
    // a → b → c → a, and d → a outside the circle.
    let c = circles(&graph(&[("b", "c"), ("c", "a"), ("a", "b"), ("d", "a")]));
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].0, ["a", "b", "c"]);
    assert_eq!(c[0].1, ["a", "b", "c", "a"]);
    // A line of imports is no circle.
    assert!(circles(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
    // Two circles sharing a file are one component; the shortest circle is drawn.
    let c = circles(&graph(&[
        ("a", "b"),
        ("b", "a"),
        ("b", "c"),
        ("c", "d"),
        ("d", "b"),
    ]));
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].0, ["a", "b", "c", "d"]);
    assert_eq!(c[0].1, ["a", "b", "a"]);
}

#[test]
fn a_made_up_crate_breaks_every_rule() {
    let long_file = "fn f() {}\n".repeat(MAX_LINES + 1);
    let short_with_tests = format!(
        "fn f() {{}}\n#[cfg(test)]\nmod tests {{\n{}}}\n",
        "// a test line\n".repeat(MAX_LINES)
    );
    let src = made_up(&[
        (
            "runner/src/main.rs",
            "mod cmd;\nmod merge;\nmod big;\nmod ok;\nfn main() { cmd::run(); }\n",
        ),
        (
            "runner/src/cmd/mod.rs",
            "pub fn run() { crate::merge::m(); }\n",
        ),
        ("runner/src/merge.rs", "pub fn m() { super::cmd::run(); }\n"),
        ("runner/src/big.rs", long_file.as_str()),
        ("runner/src/ok.rs", short_with_tests.as_str()),
    ]);
    let (cmd, circ, long) = violations(&src, &[("runner", "main.rs")]);
    let lines = |v: &[Violation]| v.iter().map(|v| v.line.clone()).collect::<Vec<_>>();
    assert_eq!(
        lines(&cmd),
        ["imports from cmd/: runner/src/merge.rs → runner/src/cmd/mod.rs"]
    );
    assert_eq!(
        lines(&circ),
        ["circle of imports: runner/src/cmd/mod.rs → runner/src/merge.rs → runner/src/cmd/mod.rs"]
    );
    assert_eq!(
        lines(&long),
        ["too long: runner/src/big.rs has 651 lines outside its tests (at most 650)"]
    );
    // An allowlist entry that no longer occurs is reported, and so is a new violation.
    let problems = compare(&long, &["runner/src/gone.rs".to_string()], "LIST");
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].starts_with("NEW too long: runner/src/big.rs"));
    assert!(problems[1].starts_with("FIXED, remove it from LIST"));
    assert!(compare(&long, &["runner/src/big.rs".to_string()], "LIST").is_empty());
}

#[test]
fn a_generic_room_that_names_a_job_kind_is_found() {
    let src = made_up(&[
        (
            "runner/src/main.rs",
            "mod cluster;\nmod job;\nmod jobs;\nfn main() { jobs::datagen::run(); }\n",
        ),
        ("runner/src/job.rs", "pub trait Job {}\n"),
        ("runner/src/jobs/mod.rs", "pub mod datagen;\n"),
        (
            "runner/src/jobs/datagen.rs",
            "use crate::job::Job;\npub fn run() { crate::cluster::coordinate(); }\n",
        ),
        (
            "runner/src/cluster/mod.rs",
            "pub fn coordinate() { crate::jobs::datagen::run(); }\n",
        ),
    ]);
    let (layers, _, _) = violations(&src, &[("runner", "main.rs")]);
    let lines: Vec<String> = layers.iter().map(|v| v.line.clone()).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with(
            "imports a job kind: runner/src/cluster/mod.rs → runner/src/jobs/datagen.rs"
        ),
        "{lines:?}"
    );
}

#[test]
fn a_server_file_that_names_or_imports_a_kind_is_found() {
    let src = made_up(&[
        (
            "runner/src/main.rs",
            "mod job;\nmod jobs;\nmod serve;\nfn main() { serve::run(); }\n",
        ),
        ("runner/src/job.rs", "pub trait Job {}\n"),
        (
            "runner/src/jobs/mod.rs",
            "pub mod datagen;\npub mod matches;\npub fn by_command() {}\n",
        ),
        (
            "runner/src/jobs/datagen/mod.rs",
            "impl Job for D { fn command(&self) -> &'static str { \"datagen\" } }\n\
             pub fn rows() {}\n",
        ),
        (
            "runner/src/jobs/matches/mod.rs",
            "impl Job for M {\n    fn command(&self) -> &'static str {\n        \
             if self.sprt { \"sprt\" } else { r#\"match\"# }\n    }\n}\n",
        ),
        (
            "runner/src/serve/mod.rs",
            "mod pages;\npub fn run() { crate::jobs::by_command(); }\n\
             #[cfg(test)]\nmod tests { const K: &str = \"sprt\"; }\n",
        ),
        (
            "runner/src/serve/pages.rs",
            "use crate::jobs::datagen;\n\
             pub fn page(kind: &str) -> bool { datagen::rows(); kind == \"sprt\" || \"x\" == \"matchy\" }\n",
        ),
    ]);
    let found: Vec<String> = serve_kinds(&src).into_iter().map(|v| v.key).collect();
    assert_eq!(
        found,
        [
            "runner/src/serve/pages.rs runner/src/jobs/datagen/mod.rs",
            "runner/src/serve/pages.rs \"sprt\"",
        ],
    );
    assert_eq!(
        kind_commands(&src).into_iter().collect::<Vec<_>>(),
        ["datagen", "match", "sprt"]
    );
}
