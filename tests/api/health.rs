use crate::helpers::spawn_app;

#[actix_web::test]
async fn healthz_answers_ok_over_real_http() {
    let app = spawn_app().await;
    let response = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("x-request-id"));
    assert_eq!(response.text().await.unwrap(), "ok");
}

#[actix_web::test]
async fn readyz_answers_200_when_the_database_is_writable() {
    let app = spawn_app().await;
    let response = app.client.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(response.status(), 200);
}

#[actix_web::test]
async fn readyz_answers_503_while_the_database_cannot_be_written() {
    let app = spawn_app().await;
    // Another process holding the write lock is what a wedged or read-only database looks like
    // from inside signupd: writes cannot get through.
    let blocker = rusqlite::Connection::open(app.state.db.path()).unwrap();
    blocker.execute_batch("BEGIN EXCLUSIVE; CREATE TABLE blocker (x);").unwrap();

    let blocked = app.client.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(blocked.status(), 503);
    assert!(blocked.headers().contains_key("retry-after"));

    blocker.execute_batch("ROLLBACK").unwrap();
    let recovered = app.client.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(recovered.status(), 200);
}

#[actix_web::test]
async fn unknown_routes_are_404_and_get_on_health_only() {
    let app = spawn_app().await;
    let missing = app.client.get(app.url("/nope")).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    let post = app.client.post(app.url("/healthz")).send().await.unwrap();
    assert_eq!(post.status(), 404);
}
