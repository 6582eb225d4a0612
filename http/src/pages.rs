//! The HTML pages: the in-browser verifier (`/verify`), the API reference rendered from the
//! OpenAPI documents (`/docs`), and the protocol and game rules rendered from their markdown
//! (`/whitepaper`, `/docs/{name}`). Every file ships inside the binary: no CDN, no build step,
//! and the pages work offline. Each page is sent with a Content-Security-Policy that allows
//! only this origin's own scripts, styles and API.

use super::schema;
use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag};
use std::sync::{LazyLock, OnceLock};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;

/// No inline script or style, nothing from another origin.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
    connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The files under /assets: (name, content type, bytes).
/// The verifier's two modules are the npm package `@vrs/client`'s own (clients/typescript/src):
/// the page and the package run one JavaScript verifier.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "vrs-verify.mjs",
        "text/javascript; charset=utf-8",
        include_str!("../../clients/typescript/src/vrs-verify.mjs"),
    ),
    (
        // Imported by vrs-verify.mjs: class-group epochs (chiavdf's VDF).
        "vrs-classgroup.mjs",
        "text/javascript; charset=utf-8",
        include_str!("../../clients/typescript/src/vrs-classgroup.mjs"),
    ),
    (
        // Imported by vrs-verify.mjs when a witness policy is given (the `witnessed` step) or a
        // game was moved (the `moved` step).
        "vrs-witnessed.mjs",
        "text/javascript; charset=utf-8",
        include_str!("../../clients/typescript/src/vrs-witnessed.mjs"),
    ),
    (
        "verify-page.mjs",
        "text/javascript; charset=utf-8",
        include_str!("../assets/verify-page.mjs"),
    ),
    (
        "verify.css",
        "text/css; charset=utf-8",
        include_str!("../assets/verify.css"),
    ),
    (
        "site.css",
        "text/css; charset=utf-8",
        include_str!("../assets/site.css"),
    ),
    // STATISTICS.md's plots (`vrs stats --svg docs/statistics`); the page links them here.
    (
        "statistics-dice-faces.svg",
        "image/svg+xml",
        include_str!("../../docs/statistics/dice-faces.svg"),
    ),
    (
        "statistics-dice-totals.svg",
        "image/svg+xml",
        include_str!("../../docs/statistics/dice-totals.svg"),
    ),
    (
        "statistics-dice-rtp.svg",
        "image/svg+xml",
        include_str!("../../docs/statistics/dice-rtp.svg"),
    ),
    (
        "statistics-sicbo-faces.svg",
        "image/svg+xml",
        include_str!("../../docs/statistics/sicbo-faces.svg"),
    ),
    (
        "statistics-sicbo-totals.svg",
        "image/svg+xml",
        include_str!("../../docs/statistics/sicbo-totals.svg"),
    ),
    (
        "statistics-sicbo-rtp.svg",
        "image/svg+xml",
        include_str!("../../docs/statistics/sicbo-rtp.svg"),
    ),
];

const VERIFY_HTML: &str = include_str!("../assets/verify.html");

/// Markdown documents served as pages: (name, title, markdown).
const DOCUMENTS: &[(&str, &str, &str)] = &[
    (
        "protocol",
        "vrs protocol: VDF, epochs, commitments, derivation",
        include_str!("../../docs/PROTOCOL.md"),
    ),
    (
        "games",
        "Game rules, payouts and validation",
        include_str!("../../docs/GAMES.md"),
    ),
    (
        "statistics",
        "Statistics of the randomness: batteries, chi-square tests, return to player",
        include_str!("../../docs/STATISTICS.md"),
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

/// A file of the pages (scripts, styles and the statistics page's plots)
#[utoipa::path(
    get,
    path = "/assets/{name}",
    tag = "pages",
    params(("name" = inline(AssetName), Path, description = "The file's name")),
    responses(
        (status = 200, description = "The file", content(
            (String = "text/javascript"),
            (String = "text/css"),
            (String = "image/svg+xml"),
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
    match REFERENCE.get() {
        Some(page) => html_response(page.clone()),
        None => not_found("this router publishes no API reference".into()),
    }
}

/// The API reference page. The OpenAPI documents it is rendered from list this module's pages
/// too, so it is rendered where the router is built ([`super::reference`]) and handed in.
static REFERENCE: OnceLock<String> = OnceLock::new();

/// Publishes the API reference page, rendering it on the first call only.
pub(super) fn publish_reference(render: fn() -> String) {
    REFERENCE.get_or_init(render);
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
        description = "protocol, games or statistics (api is the API reference, as /docs)")),
    responses(
        (status = 200, description = "The page", content_type = "text/html", body = String),
        (status = 404, description = "No such document", body = schema::ErrorBody),
    )
)]
pub async fn document(Path(name): Path<String>) -> Response {
    static PAGES: LazyLock<Vec<(&'static str, String)>> = LazyLock::new(|| {
        DOCUMENTS
            .iter()
            .map(|(name, title, md)| (*name, page(title, &document_markdown(md))))
            .collect()
    });
    match PAGES.iter().find(|(n, _)| *n == name) {
        Some((_, body)) => html_response(body.clone()),
        None => not_found(format!(
            "no document named {name:?}; there are protocol, games and statistics (and /docs for \
             the API)"
        )),
    }
}

const MARKDOWN_OPTIONS: Options = Options::ENABLE_TABLES
    .union(Options::ENABLE_FOOTNOTES)
    .union(Options::ENABLE_STRIKETHROUGH)
    .union(Options::ENABLE_HEADING_ATTRIBUTES);

pub(super) fn markdown(md: &str) -> String {
    let mut out = String::new();
    html::push_html(&mut out, Parser::new_ext(md, MARKDOWN_OPTIONS));
    without_inline_styles(out)
}

/// pulldown-cmark aligns table cells with `style` attributes, which the pages' CSP refuses
/// (no inline style): the same alignment as classes of site.css.
fn without_inline_styles(html: String) -> String {
    html.replace(" style=\"text-align: left\"", " class=\"align-left\"")
        .replace(" style=\"text-align: center\"", " class=\"align-center\"")
        .replace(" style=\"text-align: right\"", " class=\"align-right\"")
}

/// A document of docs/ as HTML, its images (`statistics/NAME.svg`, beside the markdown in the
/// repository) linked to where the binary serves them (`/assets/statistics-NAME.svg`).
fn document_markdown(md: &str) -> String {
    let events = Parser::new_ext(md, MARKDOWN_OPTIONS).map(|event| match event {
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let dest_url = match dest_url.strip_prefix("statistics/") {
                Some(name) => CowStr::from(format!("/assets/statistics-{name}")),
                None => dest_url,
            };
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            })
        }
        other => other,
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    without_inline_styles(out)
}

/// Escapes text for HTML content and attribute values.
pub(super) fn esc(s: &str) -> String {
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
pub(super) fn page(title: &str, content: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><link rel=\"stylesheet\" href=\"/assets/site.css\"></head>\
         <body><nav class=\"site\"><a href=\"/verify\">Verify a game</a>\
         <a href=\"/docs\">API reference</a><a href=\"/whitepaper\">Whitepaper</a>\
         <a href=\"/docs/games\">Game rules</a><a href=\"/docs/statistics\">Statistics</a></nav><main class=\"doc\">{content}</main></body></html>\n",
        title = esc(title),
    )
}
