FROM node:20-bookworm-slim AS frontend
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

FROM python:3.11-slim-bookworm
WORKDIR /app
COPY requirements.lock ./
RUN pip install --no-cache-dir -r requirements.lock
COPY . .
COPY --from=frontend /src/frontend/dist frontend/dist
# gcc builds the solver's C extension (fabric_engine/_maxmin.c), then leaves
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && pip install --no-cache-dir --no-deps -e . \
    && apt-get purge -y gcc libc6-dev && apt-get autoremove -y && rm -rf /var/lib/apt/lists/*
EXPOSE 8000
CMD ["python", "-m", "ibweb.serve", "ibweb.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--lifespan", "on", "--ws-max-size", "1048576", "--ws", "ibweb.websocket.deflate:WebSocketProtocol"]
