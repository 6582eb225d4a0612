//! The HTML pages: the in-browser verifier (`/verify`), the API reference rendered from the
//! OpenAPI documents (`/docs`), and the protocol and game rules rendered from their markdown
//! (`/whitepaper`, `/docs/{name}`). Every file ships inside the binary: no CDN, no build step,
//! and the pages work offline. Each page is sent with a Content-Security-Policy that allows
//! only this origin's own scripts, styles and API.

use super::{openapi, schema};
use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use pulldown_cmark::{html, Options, Parser};
use serde_json::Value;
use std::fmt::Write;
use std::sync::LazyLock;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;

/// No inline script or style, nothing from another origin.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
    connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The files under /assets: (name, content type, bytes).
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "vrs-verify.mjs",
        "text/javascript; charset=utf-8",
        include_str!("../../assets/vrs-verify.mjs"),
    ),
    (
        // Imported by vrs-verify.mjs: class-group epochs (chiavdf's VDF).
        "vrs-classgroup.mjs",
        "text/javascript; charset=utf-8",
        include_str!("../../assets/vrs-classgroup.mjs"),
    ),
    (
        "verify-page.mjs",
        "text/javascript; charset=utf-8",
        include_str!("../../assets/verify-page.mjs"),
    ),
    (
        "verify.css",
        "text/css; charset=utf-8",
        include_str!("../../assets/verify.css"),
    ),
    (
        "site.css",
        "text/css; charset=utf-8",
        include_str!("../../assets/site.css"),
    ),
];

const VERIFY_HTML: &str = include_str!("../../assets/verify.html");

/// Markdown documents served as pages: (name, title, markdown).
const DOCUMENTS: &[(&str, &str, &str)] = &[
    (
        "protocol",
        "vrs protocol: VDF, epochs, commitments, derivation",
        include_str!("../../../docs/PROTOCOL.md"),
    ),
    (
        "games",
        "Game rules, payouts and validation",
        include_str!("../../../docs/GAMES.md"),
    ),
];

/// The name of a file under /assets: one of [`ASSETS`].
struct AssetName;

impl utoipa::PartialSchema for AssetName {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(ASSETS.iter().map(|(name, _, _)| *name)))
            .into()
    }
}

impl utoipa::ToSchema for AssetName {}

/// The name of a page under /docs/: one of [`DOCUMENTS`], or `api` (its own route, the API
/// reference).
struct DocumentName;

impl utoipa::PartialSchema for DocumentName {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(
                DOCUMENTS.iter().map(|(name, _, _)| *name).chain(["api"]),
            ))
            .into()
    }
}

impl utoipa::ToSchema for DocumentName {}

fn html_response(body: String) -> Response {
    let mut res = (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response();
    res.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    res
}

fn not_found(message: String) -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(schema::ErrorBody { error: message }),
    )
        .into_response()
}

/// The in-browser verifier
///
/// A page that verifies a game in the browser, in plain JavaScript independent of the
/// server's code (BigInt for the group arithmetic and hash-to-prime, WebCrypto for SHA-256 and
/// HMAC), from this API's public data. `/verify?game=<id>` verifies that game at once.
#[utoipa::path(
    get,
    path = "/verify",
    tag = "pages",
    params(("game" = Option<String>, Query, description = "A game id to verify at once")),
    responses((status = 200, description = "The page", content_type = "text/html", body = String))
)]
pub async fn verify_page() -> Response {
    html_response(VERIFY_HTML.to_owned())
}

/// A file of the pages (scripts and styles)
#[utoipa::path(
    get,
    path = "/assets/{name}",
    tag = "pages",
    params(("name" = inline(AssetName), Path, description = "The file's name")),
    responses(
        (status = 200, description = "The file", content(
            (String = "text/javascript"),
            (String = "text/css"),
        )),
        (status = 404, description = "No such file", body = schema::ErrorBody),
    )
)]
pub async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, content_type, body)) => (
            [
                (header::CONTENT_TYPE, *content_type),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            *body,
        )
            .into_response(),
        None => not_found(format!("no asset named {name:?}")),
    }
}

/// The API reference
///
/// Generated from this service's OpenAPI documents (`/api/v1/openapi.json` and the notary's
/// `/v1/openapi.json`).
#[utoipa::path(
    get,
    path = "/docs",
    tag = "pages",
    responses((status = 200, description = "The page", content_type = "text/html", body = String))
)]
pub async fn api_reference() -> Response {
    static PAGE: LazyLock<String> = LazyLock::new(render_reference);
    html_response(PAGE.clone())
}

/// The API reference (same page as /docs)
#[utoipa::path(
    get,
    path = "/docs/api",
    tag = "pages",
    responses((status = 200, description = "The page", content_type = "text/html", body = String))
)]
pub async fn api_reference_alias() -> Response {
    api_reference().await
}

/// The whitepaper: the protocol document
///
/// docs/PROTOCOL.md rendered as a page: the group, the VDF and its proof, epochs, commitments,
/// the derivation of outcomes, the pool, anchors and notary receipts, byte for byte.
#[utoipa::path(
    get,
    path = "/whitepaper",
    tag = "pages",
    responses((status = 200, description = "The page", content_type = "text/html", body = String))
)]
pub async fn whitepaper() -> Response {
    document(Path("protocol".to_owned())).await
}

/// A document: `protocol` (the whitepaper) or `games` (rules and payouts)
#[utoipa::path(
    get,
    path = "/docs/{name}",
    tag = "pages",
    params(("name" = inline(DocumentName), Path,
        description = "protocol or games (api is the API reference, as /docs)")),
    responses(
        (status = 200, description = "The page", content_type = "text/html", body = String),
        (status = 404, description = "No such document", body = schema::ErrorBody),
    )
)]
pub async fn document(Path(name): Path<String>) -> Response {
    static PAGES: LazyLock<Vec<(&'static str, String)>> = LazyLock::new(|| {
        DOCUMENTS
            .iter()
            .map(|(name, title, md)| (*name, page(title, &markdown(md))))
            .collect()
    });
    match PAGES.iter().find(|(n, _)| *n == name) {
        Some((_, body)) => html_response(body.clone()),
        None => not_found(format!(
            "no document named {name:?}; there are protocol and games (and /docs for the API)"
        )),
    }
}

fn markdown(md: &str) -> String {
    let mut out = String::new();
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_HEADING_ATTRIBUTES;
    html::push_html(&mut out, Parser::new_ext(md, options));
    out
}

/// Escapes text for HTML content and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The frame every page shares: title, navigation, content.
fn page(title: &str, content: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><link rel=\"stylesheet\" href=\"/assets/site.css\"></head>\
         <body><nav class=\"site\"><a href=\"/verify\">Verify a game</a>\
         <a href=\"/docs\">API reference</a><a href=\"/whitepaper\">Whitepaper</a>\
         <a href=\"/docs/games\">Game rules</a></nav><main class=\"doc\">{content}</main></body></html>\n",
        title = esc(title),
    )
}

fn render_reference() -> String {
    let docs = [
        ("/api/v1/openapi.json", openapi::randomness()),
        ("/v1/openapi.json", openapi::notary()),
    ];
    let mut out = String::from("<h1>vrs API reference</h1>");
    let _ = write!(
        out,
        "<p>Generated from the service's OpenAPI {} documents: \
         <a href=\"/api/v1/openapi.json\">/api/v1/openapi.json</a> (randomness and games) and \
         <a href=\"/v1/openapi.json\">/v1/openapi.json</a> (notary). Every body is JSON; every \
         error is a JSON object with an <code>error</code> message.</p>",
        esc(&serde_json::to_value(docs[0].1)
            .ok()
            .and_then(|v| v["openapi"].as_str().map(str::to_owned))
            .unwrap_or_default()),
    );
    for (url, doc) in docs {
        let Ok(v) = serde_json::to_value(doc) else {
            continue;
        };
        render_document(&mut out, url, &v);
    }
    page("vrs API reference", &out)
}

fn render_document(out: &mut String, url: &str, doc: &Value) {
    let info = &doc["info"];
    let _ = write!(
        out,
        "<section class=\"api\"><h2>{} <small>{}</small></h2>{}<p>Document: \
         <a href=\"{url}\">{url}</a></p>",
        esc(info["title"].as_str().unwrap_or("")),
        esc(info["version"].as_str().unwrap_or("")),
        markdown(info["description"].as_str().unwrap_or("")),
    );
    let empty = serde_json::Map::new();
    let paths = doc["paths"].as_object().unwrap_or(&empty);
    out.push_str(
        "<table class=\"endpoints\"><tr><th>Method</th><th>Path</th><th>Purpose</th></tr>",
    );
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap_or(&empty) {
            let _ = write!(
                out,
                "<tr><td class=\"method {m}\">{M}</td><td><a href=\"#{id}\"><code>{p}</code></a></td><td>{s}</td></tr>",
                m = esc(method),
                M = esc(&method.to_uppercase()),
                id = esc(&anchor_id(method, path)),
                p = esc(path),
                s = esc(op["summary"].as_str().unwrap_or("")),
            );
        }
    }
    out.push_str("</table>");
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap_or(&empty) {
            render_operation(out, path, method, op);
        }
    }
    if let Some(schemas) = doc["components"]["schemas"].as_object() {
        out.push_str("<h3>Schemas</h3>");
        for (name, s) in schemas {
            let _ = write!(
                out,
                "<div class=\"schema\" id=\"schema-{n}\"><h4>{n}</h4>",
                n = esc(name)
            );
            if let Some(d) = s["description"].as_str() {
                out.push_str(&markdown(d));
            }
            render_properties(out, s);
            out.push_str("</div>");
        }
    }
    out.push_str("</section>");
}

fn anchor_id(method: &str, path: &str) -> String {
    let mut id = format!("{method}-");
    id.extend(
        path.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }),
    );
    id
}

fn render_operation(out: &mut String, path: &str, method: &str, op: &Value) {
    let _ = write!(
        out,
        "<div class=\"operation\" id=\"{id}\"><h3><span class=\"method {m}\">{M}</span> <code>{p}</code></h3>\
         <p class=\"summary\">{s}</p>",
        id = esc(&anchor_id(method, path)),
        m = esc(method),
        M = esc(&method.to_uppercase()),
        p = esc(path),
        s = esc(op["summary"].as_str().unwrap_or("")),
    );
    if let Some(d) = op["description"].as_str() {
        out.push_str(&markdown(d));
    }
    if let Some(params) = op["parameters"].as_array() {
        out.push_str("<h4>Parameters</h4><table><tr><th>Name</th><th>In</th><th>Required</th><th>Description</th></tr>");
        for p in params {
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(p["name"].as_str().unwrap_or("")),
                esc(p["in"].as_str().unwrap_or("")),
                if p["required"].as_bool().unwrap_or(false) {
                    "yes"
                } else {
                    "no"
                },
                esc(p["description"].as_str().unwrap_or("")),
            );
        }
        out.push_str("</table>");
    }
    if let Some(body) = op["requestBody"].as_object() {
        out.push_str("<h4>Request body</h4>");
        if let Some(d) = body.get("description").and_then(Value::as_str) {
            let _ = write!(out, "<p>{}</p>", esc(d));
        }
        if let Some(content) = body.get("content").and_then(Value::as_object) {
            for (ct, media) in content {
                let _ = write!(
                    out,
                    "<p><code>{}</code>: {}</p>",
                    esc(ct),
                    schema_link(&media["schema"])
                );
                if let Some(ex) = media.get("example") {
                    let _ = write!(
                        out,
                        "<pre>{}</pre>",
                        esc(&serde_json::to_string_pretty(ex).unwrap_or_default())
                    );
                }
            }
        }
    }
    if let Some(responses) = op["responses"].as_object() {
        out.push_str(
            "<h4>Responses</h4><table><tr><th>Status</th><th>Meaning</th><th>Body</th></tr>",
        );
        for (status, r) in responses {
            let body = r["content"]
                .as_object()
                .and_then(|c| c.values().next())
                .map(|m| schema_link(&m["schema"]))
                .unwrap_or_default();
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(status),
                esc(r["description"].as_str().unwrap_or("")),
                body
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</div>");
}

/// A schema as a link to its definition, or its type.
fn schema_link(s: &Value) -> String {
    if let Some(r) = s["$ref"].as_str() {
        let name = r.rsplit('/').next().unwrap_or(r);
        return format!(
            "<a href=\"#schema-{n}\"><code>{n}</code></a>",
            n = esc(name)
        );
    }
    if let Some(one_of) = s["oneOf"].as_array() {
        return one_of
            .iter()
            .map(schema_link)
            .collect::<Vec<_>>()
            .join(" or ");
    }
    if s["type"] == "array" {
        return format!("array of {}", schema_link(&s["items"]));
    }
    match &s["type"] {
        Value::String(t) => format!("<code>{}</code>", esc(t)),
        Value::Array(ts) => format!(
            "<code>{}</code>",
            esc(&ts
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" | "))
        ),
        _ => "<code>any</code>".into(),
    }
}

fn render_properties(out: &mut String, s: &Value) {
    // The bet and notary bodies: their members, then per-type rules (in the description).
    if let Some(parts) = s["allOf"].as_array() {
        for part in parts {
            render_properties(out, part);
        }
        return;
    }
    let Some(props) = s["properties"].as_object() else {
        if let Some(values) = s["enum"].as_array() {
            let _ = write!(
                out,
                "<p>One of: {}</p>",
                values
                    .iter()
                    .map(|v| format!("<code>{}</code>", esc(&v.to_string())))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        return;
    };
    let required: Vec<&str> = s["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push_str("<table><tr><th>Member</th><th>Type</th><th>Description</th></tr>");
    for (name, p) in props {
        let _ = write!(
            out,
            "<tr><td><code>{}</code>{}</td><td>{}</td><td>{}</td></tr>",
            esc(name),
            if required.contains(&name.as_str()) {
                ""
            } else {
                " <small>(optional)</small>"
            },
            schema_link(p),
            esc(p["description"].as_str().unwrap_or("")),
        );
    }
    out.push_str("</table>");
}
