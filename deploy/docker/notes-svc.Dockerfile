# Image of notes-svc. The build context is the repository root:
#
#   docker build -f deploy/docker/notes-svc.Dockerfile --build-arg VERSION=1.2.3 -t tickerdesk/notes-svc:1.2.3 .
#
# Two ways to the same final image (a static binary on an empty root
# filesystem, CA certificates, non-root user 65532, read-only root friendly):
#
#   --target image    (the default, last stage) compiles in golang:$GO_VERSION
#                     and copies the binary onto distroless static:nonroot.
#                     Needs a registry for the base images, and BuildKit (the
#                     default builder since Docker 23), which skips the
#                     offline stage below.
#   --target offline  copies a binary built on the host into FROM scratch, for
#                     machines without a registry. scripts/images.sh stages
#                     deploy/docker/staging/notes-svc/ (binary + CA bundle) first.
#
# The offline stage comes first on purpose: the legacy builder builds every
# stage up to the target, so offline must not depend on a pulled image.

ARG GO_VERSION=1.26
ARG GO_IMAGE=golang:${GO_VERSION}-bookworm
ARG DISTROLESS_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM scratch AS offline
COPY deploy/docker/staging/notes-svc/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY deploy/docker/staging/notes-svc/notes-svc /notes-svc
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/notes-svc"]
CMD ["serve"]

FROM ${GO_IMAGE} AS build
WORKDIR /src
ENV GOWORK=off CGO_ENABLED=0 GOTOOLCHAIN=local
# Module downloads first, so source edits reuse the cached layer.
COPY pkg/go.mod pkg/go.sum pkg/
COPY notes-svc/go.mod notes-svc/go.sum notes-svc/
RUN cd notes-svc && go mod download
COPY pkg/ pkg/
COPY notes-svc/ notes-svc/
ARG VERSION=dev
RUN cd notes-svc && go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/notes-svc ./cmd/notes-svc

FROM ${DISTROLESS_IMAGE} AS image
COPY --from=build /out/notes-svc /notes-svc
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/notes-svc"]
CMD ["serve"]
