/// Compose projects the tests write into a temp dir, as users write them.
public enum ComposeProjects {
    /// Two services, secrets from a file and from the environment, configs from a file and inline, a named volume.
    public static let shop = """
        services:
          db:
            image: postgres:17
            secrets: [db-password, {source: api-token, target: token, mode: "0400"}]
            configs: [{source: initdb, target: /docker-entrypoint-initdb.d/init.sql}]
            environment:
              POSTGRES_PASSWORD_FILE: /run/secrets/db-password
            volumes: [data:/var/lib/postgresql/data]
          web:
            image: nginx:1.27
            ports: ["8080:80"]
            configs: [site]
            depends_on: [db]
        volumes:
          data:
        secrets:
          db-password:
            file: ./secrets/db.txt
          api-token:
            environment: API_TOKEN
        configs:
          initdb:
            file: ./init.sql
          site:
            content: "server { listen 80; }"
        """
}
