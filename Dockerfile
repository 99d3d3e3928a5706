# A minimal image of the server: a static binary (CGO_ENABLED=0; the SQLite
# driver is pure Go) on distroless static, as a non-root user. Not built on
# the project's machines (no image builds there): see docs/operations.md.
#
#   docker build -t parley .
#   docker run -p 8080:8080 -v parley:/data parley
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/parley ./cmd/parley

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/parley /usr/local/bin/parley
# The SQLite file by default; set PARLEY_DATABASE_URL(_FILE) for PostgreSQL.
ENV PARLEY_ADDR=0.0.0.0:8080 \
    PARLEY_DATABASE_URL=/data/parley.db \
    PARLEY_LOG_FORMAT=json
VOLUME /data
EXPOSE 8080
USER nonroot:nonroot
HEALTHCHECK --interval=30s --timeout=6s --start-period=20s --retries=3 \
    CMD ["/usr/local/bin/parley", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/parley"]
CMD ["serve"]
