# The signupd container image: one static-ish binary on debian:bookworm-slim, running as uid/gid
# 10001 with its state in the volume /data. Zero setup: `docker run -p 127.0.0.1:8080:8080 -v
# signupd-data:/data signupd` serves the demo at http://localhost:8080 and writes mail as files
# into /data/mail; compose.yaml shows SMTP, secrets, a Cloudflare Tunnel and Litestream.
#
# Two ways to the binary. By default the build stage below compiles it for the building machine
# (`docker buildx build --platform linux/arm64 .` does so natively or, slowly, under emulation).
# The target `prebuilt` takes a binary built outside instead, for the image's architecture, from
# packaging/container/prebuilt/ARCH/signupd (ARCH as Docker names it: amd64, arm64, arm): that is
# how the arm64 and armv7 images are made from .ci/cross's builds, in minutes on an x86_64 machine:
#
#   bash .ci/cross build aarch64-unknown-linux-gnu
#   install -D target/aarch64-unknown-linux-gnu/release/signupd packaging/container/prebuilt/arm64/signupd
#   docker buildx build --platform linux/arm64 --target prebuilt -t signupd:arm64 .
#
# .ci/container cross does it with buildah; tests/container/image.py checks an image.

# The toolchain Cargo.toml's rust-version pins.
ARG RUST_VERSION=1.95
# The runtime's base. The official name's manifest list has every architecture, so Docker picks
# the image's own; a builder that holds one architecture a name (buildah with CI's stand-in bases,
# tests/container/stand-ins.sh) is given the architecture's own repository of the same image:
# --build-arg DEBIAN_IMAGE=docker.io/arm64v8/debian:bookworm-slim (or arm32v7/).
ARG DEBIAN_IMAGE=debian:bookworm-slim

FROM rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src

# The registry and the target directory are cache mounts (BuildKit and buildah both keep them
# on the building machine between builds), so a rebuild after a change compiles only signupd;
# sharing=locked lets two builds at once take turns rather than corrupt the target directory.
# The dependencies first, in a layer of their own: where a builder keeps layers but not cache
# mounts, it is rebuilt only when Cargo.toml or Cargo.lock change, not on every edit of src/. Stub
# sources stand in for the crate's library and binary (its only targets the build needs;
# examples, tests and fuzz are not copied).
COPY Cargo.toml Cargo.lock ./
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target,sharing=locked \
    mkdir src \
    && echo 'fn main() {}' > src/main.rs \
    && touch src/lib.rs \
    && cargo build --release --locked --bin signupd \
    && rm -rf src

# The real sources, and what they include at compile time (askama's templates/, the stylesheets
# and the language catalogues). COPY keeps the files' own modification times, which may be older
# than the stub build: touch them so cargo rebuilds the crate rather than keep the stub.
COPY build.rs ./
COPY src src
COPY templates templates
COPY static static
COPY locales locales
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target,sharing=locked \
    touch build.rs src/lib.rs src/main.rs \
    && cargo build --release --locked --bin signupd \
    && install -m 0755 target/release/signupd /usr/local/bin/signupd

FROM ${DEBIAN_IMAGE} AS runtime

# Only the CA certificates: SMTP over TLS and the alert/webhook clients verify servers with them.
# The package lists and apt's caches (80 MB where the base image does not clean them itself)
# leave with the same layer.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin

# A fixed uid/gid, so the volume's owner is the same in every container made from the image (and
# a bind mount can be chowned to 10001 in advance). /data is created 0700: the database and the
# generated secrets are nobody else's.
RUN groupadd --system --gid 10001 signupd \
    && useradd --system --uid 10001 --gid 10001 --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin signupd \
    && install -d -m 0700 -o 10001 -g 10001 /data

COPY packaging/container/signupd.toml /etc/signupd/signupd.toml

# Secrets given as Docker/compose secrets appear as /run/secrets/NAME, which signupd reads as
# credentials (smtp_password, token_secret, hash_key, webhook_NAME). A plain `docker run` has no
# /run/secrets: then token_secret and hash_key are generated in /data on first start.
ENV SIGNUPD_CONFIG=/etc/signupd/signupd.toml \
    CREDENTIALS_DIRECTORY=/run/secrets

USER 10001:10001
VOLUME /data
WORKDIR /data
EXPOSE 8080
# signupd finishes the requests in flight and stops its workers on SIGTERM.
STOPSIGNAL SIGTERM
# No curl in the image: signupd asks its own /readyz.
HEALTHCHECK --interval=30s --timeout=10s --start-period=10s --retries=3 CMD ["signupd", "healthcheck"]
ENTRYPOINT ["signupd"]
CMD ["serve"]

# Last but the binary, so a new version invalidates no layer above. Keep the default equal to
# Cargo.toml's version (tests/container/image.py checks it); a release passes --build-arg VERSION.
ARG VERSION=0.1.0
# Where the source is published. Cargo.toml names no `repository` yet: when it does, keep the two
# equal (the test then checks it); a fork passes --build-arg SOURCE.
ARG SOURCE=https://github.com/signupd/signupd
LABEL org.opencontainers.image.title="signupd" \
      org.opencontainers.image.description="Self-contained, single-binary double opt-in signup service" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT OR Apache-2.0"

# The image from a binary built outside, for TARGETARCH (set by the builder from --platform or
# --arch): `--target prebuilt`. Never built otherwise (the final image does not depend on it).
FROM runtime AS prebuilt
ARG TARGETARCH
COPY packaging/container/prebuilt/${TARGETARCH}/signupd /usr/local/bin/signupd

# The default image: the binary the build stage compiled.
FROM runtime
COPY --from=build /usr/local/bin/signupd /usr/local/bin/signupd
