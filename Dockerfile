# Builds the one nearline binary into a small image.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/nearline ./cmd/nearline

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/nearline /usr/local/bin/nearline
USER nobody
EXPOSE 3030
ENTRYPOINT ["nearline"]
CMD ["run"]
