# Image of notes-svc: a static binary on an empty root filesystem, with the CA
# bundle, user 65532 and nothing to write, so it runs with a read-only root.
#
# The binary is built on the host (CGO_ENABLED=0, -trimpath) and staged with
# the host's CA bundle in deploy/docker/staging/notes-svc/ by scripts/images.sh
# (make images); the build context is the repository root. FROM scratch needs
# no base image, so the build never asks a registry for anything.
FROM scratch
COPY deploy/docker/staging/notes-svc/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY deploy/docker/staging/notes-svc/notes-svc /notes-svc
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/notes-svc"]
CMD ["serve"]
