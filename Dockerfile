# Builds the one nearline binary into a small image.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The context has no .git, so the build records no VCS revision: COMMIT
# (docker compose build passes $COMMIT) gives `nearline version` and the
# status method theirs.
ARG COMMIT=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.commit=${COMMIT}" -o /out/nearline ./cmd/nearline

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/nearline /usr/local/bin/nearline
USER nobody
EXPOSE 3030
ENTRYPOINT ["nearline"]
CMD ["run"]
