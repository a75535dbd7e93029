-- The official entrypoint creates POSTGRES_DB (notes); marketdata-svc gets
-- its own database on the same server.
CREATE DATABASE marketdata;
