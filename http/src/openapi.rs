//! The two OpenAPI 3.1 documents: the randomness and games API (`GET /api/v1/openapi.json`)
//! and the notary (`GET /v1/openapi.json`). Each route is registered from its handler's own
//! `#[utoipa::path]` annotation (utoipa-axum's `routes!`), so a route cannot exist without
//! its documentation, nor the other way round.

use super::schema;
use super::{games, notary, pages, system, State};
use std::sync::LazyLock;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::OpenApi as Document;
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "vrs: verifiable randomness",
        version = "0.2.0",
        description = "Randomness that nobody, the operator included, can predict or bias: \
            epochs resolved by a verifiable delay function (Wesolowski proofs over the RSA-2048 \
            group) over committed bets; two provably fair games (dice, Sic Bo) and raw random \
            values; every outcome verifiable offline (docs/PROTOCOL.md, served at /whitepaper). \
            Errors are JSON objects with an `error` message; a method the path does not accept \
            gets 405 with an `Allow` header.",
        license(name = "MIT OR Apache-2.0"),
    ),
    tags(
        (name = "system", description = "Service info, health, statistics"),
        (name = "randomness", description = "Entropy and raw random values"),
        (name = "games", description = "Dice and Sic Bo: bets, results, verification"),
        (name = "audit", description = "Public records for independent verification"),
        (name = "pages", description = "HTML pages: the in-browser verifier and the documents"),
    ),
    components(schemas(schema::ErrorBody, schema::MethodNotAllowed))
)]
struct RandomnessDoc;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "vrs notary",
        version = "0.2.0",
        description = "Records a payload hash under a schema and answers with a receipt that is \
            batched into a Merkle tree and anchored on an EVM layer-2 (docs/PROTOCOL.md §17). \
            Notarizing is paid per request with an API key or an x402 payment; reading is \
            public.",
        license(name = "MIT OR Apache-2.0"),
    ),
    tags((name = "notary", description = "Notarization receipts")),
    modifiers(&PaymentSchemes),
    components(schemas(schema::ErrorBody, schema::MethodNotAllowed))
)]
struct NotaryDoc;

/// The two ways to pay for a notarization.
struct PaymentSchemes;

impl Modify for PaymentSchemes {
    fn modify(&self, doc: &mut Document) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An API key from `vrs keys create --name NAME`"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "x402",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "PAYMENT-SIGNATURE",
                "An x402 v2 payment (base64 JSON, EIP-3009 authorization); v1 clients send \
                 X-PAYMENT. Without either, the answer is 402 with the requirements.",
            ))),
        );
    }
}

/// The randomness and games routes with their documentation.
pub fn randomness_routes() -> OpenApiRouter<State> {
    OpenApiRouter::with_openapi(RandomnessDoc::openapi())
        .routes(routes!(system::info))
        .routes(routes!(system::health))
        .routes(routes!(system::entropy))
        .routes(routes!(system::stats))
        .routes(routes!(system::recent))
        .routes(routes!(games::catalog))
        .routes(routes!(games::dice_bet))
        .routes(routes!(games::sicbo_bet))
        .routes(routes!(games::rng_generate))
        .routes(routes!(games::game_result))
        .routes(routes!(games::verify))
        .routes(routes!(super::pool_batches::batch))
        .routes(routes!(super::epochs::epoch))
        .routes(routes!(randomness_document))
        .routes(routes!(pages::verify_page))
        .routes(routes!(pages::asset))
        .routes(routes!(pages::api_reference))
        .routes(routes!(pages::api_reference_alias))
        .routes(routes!(pages::whitepaper))
        .routes(routes!(pages::document))
}

/// The notary routes with their documentation.
pub fn notary_routes() -> OpenApiRouter<State> {
    OpenApiRouter::with_openapi(NotaryDoc::openapi())
        .routes(routes!(notary::notarize))
        .routes(routes!(notary::schemas))
        .routes(routes!(notary::status))
        .routes(routes!(notary::receipt))
        .routes(routes!(notary_document))
}

/// The randomness API's document, built once.
pub fn randomness() -> &'static Document {
    static DOC: LazyLock<Document> =
        LazyLock::new(|| rng_body_required(with_guard_answers(randomness_routes().into_openapi())));
    &DOC
}

/// A raw RNG request needs `Content-Type: application/json` even without a body (a write
/// without it is a CORS simple request), which OpenAPI can only say by requiring the body:
/// the document asks for one (an object, or null for no seed), and the service also takes an
/// empty body with that header.
fn rng_body_required(mut doc: Document) -> Document {
    let body = doc
        .paths
        .paths
        .get_mut("/api/v1/rng/generate")
        .and_then(|item| item.post.as_mut())
        .and_then(|op| op.request_body.as_mut());
    if let Some(body) = body {
        body.required = Some(utoipa::openapi::Required::True);
    }
    doc
}

/// The notary's document, built once.
pub fn notary() -> &'static Document {
    static DOC: LazyLock<Document> =
        LazyLock::new(|| with_guard_answers(notary_routes().into_openapi()));
    &DOC
}

/// Documents what the listener's guards (http/mod.rs) may answer on every write operation
/// before its handler runs: 408 for a body that does not arrive in time, 429 beyond the
/// client's write rate. Added here, once, so no write operation can miss them.
fn with_guard_answers(mut doc: Document) -> Document {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    use utoipa::openapi::{ContentBuilder, HeaderBuilder, Ref, ResponseBuilder};
    let error = || {
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("ErrorBody")))
            .build()
    };
    let slow = ResponseBuilder::new()
        .description("The request body did not arrive within the body timeout")
        .content("application/json", error())
        .build();
    let limited_body = ObjectBuilder::new()
        .property("error", ObjectBuilder::new().schema_type(Type::String))
        .property(
            "retry_after",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1)),
        )
        .required("error")
        .required("retry_after")
        .description(Some("Too many writes from this client"));
    let limited = ResponseBuilder::new()
        .description("Too many write requests from this client; retry after Retry-After seconds")
        .content(
            "application/json",
            ContentBuilder::new().schema(Some(limited_body)).build(),
        )
        .header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(
                    ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .minimum(Some(1)),
                )
                .description(Some("Seconds to wait before the next write"))
                .build(),
        )
        .build();
    for item in doc.paths.paths.values_mut() {
        for op in [
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ]
        .into_iter()
        .flatten()
        {
            let answers = &mut op.responses.responses;
            answers
                .entry("408".to_owned())
                .or_insert_with(|| slow.clone().into());
            answers
                .entry("429".to_owned())
                .or_insert_with(|| limited.clone().into());
        }
    }
    doc
}

/// The OpenAPI 3.1 document of this API (randomness and games).
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    tag = "system",
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json", body = Object))
)]
pub async fn randomness_document() -> axum::Json<&'static Document> {
    axum::Json(randomness())
}

/// The OpenAPI 3.1 document of the notary API.
#[utoipa::path(
    get,
    path = "/v1/openapi.json",
    tag = "notary",
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json", body = Object))
)]
pub async fn notary_document() -> axum::Json<&'static Document> {
    axum::Json(notary())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (document, method, path) of every endpoint of the interface (sections 4 and 4.4).
    const INTERFACE: &[(&str, &str, &str)] = &[
        ("randomness", "get", "/"),
        ("randomness", "get", "/health"),
        ("randomness", "get", "/api/v1/entropy"),
        ("randomness", "get", "/api/v1/games"),
        ("randomness", "post", "/api/v1/games/dice/bet"),
        ("randomness", "post", "/api/v1/games/sicbo/bet"),
        ("randomness", "post", "/api/v1/rng/generate"),
        ("randomness", "get", "/api/v1/games/{gameId}"),
        ("randomness", "get", "/api/v1/verify/{gameId}"),
        ("randomness", "get", "/api/v1/stats"),
        ("randomness", "get", "/api/v1/recent"),
        ("notary", "post", "/v1/notarize"),
        ("notary", "get", "/v1/notarize/{receipt_id}"),
        ("notary", "get", "/v1/notarize/schemas"),
        ("notary", "get", "/v1/notarize/status"),
    ];

    #[test]
    fn both_documents_are_openapi_3_1_and_cover_the_interface() {
        for (name, doc) in [("randomness", randomness()), ("notary", notary())] {
            let v = serde_json::to_value(doc).expect("serialises");
            assert_eq!(v["openapi"], "3.1.0", "{name}");
            for (_, method, path) in INTERFACE.iter().filter(|(d, _, _)| *d == name) {
                let op = &v["paths"][path][method];
                assert!(op.is_object(), "{name} lacks {method} {path}");
                assert!(
                    op["responses"].is_object(),
                    "{method} {path} has no responses"
                );
                assert!(op["summary"].is_string(), "{method} {path} has no summary");
            }
        }
    }

    #[test]
    fn every_referenced_schema_is_defined() {
        for doc in [randomness(), notary()] {
            let text = serde_json::to_string(doc).expect("serialises");
            let v: serde_json::Value = serde_json::from_str(&text).expect("parses");
            for part in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
                let name = part.split('"').next().expect("a name");
                assert!(
                    v["components"]["schemas"][name].is_object(),
                    "{name} is referenced but not defined"
                );
            }
        }
    }
}
