"""A corpus of credential shapes: each entry is a text that holds one secret, and the secret.

Every secret is unique (so a leak names its shape) and long enough that finding it in an output
means it leaked. The shapes are written for lakemark's tests: JDBC and other URLs with user-info
(passwords holding '/', ':' and '@'), Oracle's thin and EZConnect forms, query and semicolon
parameters, libpq keywords, JSON and Python mappings, command-line and Glue job arguments, Spark
configuration keys, AWS key ids and secret keys, bearer tokens, PEM keys and API-token shapes.
"""

from __future__ import annotations

# (text, secret); the secret is a substring of the text
SHAPES: list[tuple[str, str]] = [
    # URL user-info, every JDBC and URL form
    ("jdbc:oracle:thin:scott/Orc1ePassW0rd01@//127.0.0.1:1521/orcl", "Orc1ePassW0rd01"),
    ("jdbc:oracle:thin:scott/Orc@le/Pass02x@//db.example.com:1521/svc", "Orc@le/Pass02x"),
    ("jdbc:oracle:thin:hr/0raclePassSid03@db.example.com:1521:ORCL", "0raclePassSid03"),
    ("jdbc:oracle:oci:hr/0ciPassword04@(DESCRIPTION=(ADDRESS=(HOST=h)(PORT=1521)))",
     "0ciPassword04"),
    ("jdbc:postgresql://etl:S3c/retSlash05@db.example.com:5432/shop", "S3c/retSlash05"),
    ("jdbc:postgresql://etl:p@ss@tSign06@db.example.com/shop", "p@ss@tSign06"),
    ("jdbc:mysql://loader:MyS:qlColon07@10.0.0.7:3306/shop", "MyS:qlColon07"),
    ("jdbc:mariadb://loader:MariaPw08x@mariadb.local/db?useSSL=true", "MariaPw08x"),
    ("mysql://u:UnknownScheme09@127.0.0.1/x", "UnknownScheme09"),
    ("postgresql://lakemark:PgStatePw10@pg.internal:5432/state?schema=lm", "PgStatePw10"),
    ("redis://:RedisOnlyPw11@cache.local:6379/0", "RedisOnlyPw11"),
    ("mongodb+srv://app:MongoSrvPw12@cluster0.example.net/?retryWrites=true", "MongoSrvPw12"),
    ("https://deploy:HttpsBasicPw13@git.example.com/repo.git", "HttpsBasicPw13"),
    ("scott/EzConnectPw14@//db.example.com:1521/orclpdb", "EzConnectPw14"),
    # query, semicolon and keyword parameters
    ("jdbc:mysql://h:3306/shop?user=etl&password=QueryParamPw15&ssl=true", "QueryParamPw15"),
    ("jdbc:sqlserver://h:1433;databaseName=x;user=sa;password=SemicolonPw16;encrypt=true",
     "SemicolonPw16"),
    ("jdbc:sqlserver://h:1433;user=sa;password={Braced;Pw17};databaseName=x", "Braced;Pw17"),
    ("jdbc:snowflake://acct.snowflakecomputing.com/?user=u&pwd=SnowPwd18&db=d", "SnowPwd18"),
    ("jdbc:redshift://rs:5439/dev?AccessKeyID=AKIALKMKTEST0000019X&SecretAccessKey=RsSecret19",
     "RsSecret19"),
    ("https://api.example.com/v1/data?api_key=QueryApiKey20&format=json", "QueryApiKey20"),
    ("https://maps.example.com/x?key=BareKeyParam21", "BareKeyParam21"),
    ("https://b.s3.amazonaws.com/k?X-Amz-Signature=PresignSig22abc&X-Amz-Expires=60",
     "PresignSig22abc"),
    ("host=pg user=etl password=LibpqKeyword23 dbname=shop", "LibpqKeyword23"),
    ("DefaultEndpointsProtocol=https;AccountName=acc;AccountKey=AzureAccKey24==;"
     "EndpointSuffix=core.windows.net", "AzureAccKey24=="),
    # mappings, arguments, configuration
    ('{"user": "etl", "password": "JsonPassword25"}', "JsonPassword25"),
    ("{'client_secret': 'PyDictSecret26'}", "PyDictSecret26"),
    ("--DB_PWD GlueArgPwd27", "GlueArgPwd27"),
    ("--api_key=GlueApiKey28", "GlueApiKey28"),
    ("--conf spark.hadoop.fs.s3a.secret.key=S3aConfSecret29 --conf spark.x=1", "S3aConfSecret29"),
    ("-Dspark.hadoop.fs.s3a.access.key=AKIALKMKTEST00000030 -Dx=1", "AKIALKMKTEST00000030"),
    ("export PGPASSWORD=EnvPgPassword31", "EnvPgPassword31"),
    ("auth_token: YamlAuthToken32", "YamlAuthToken32"),
    # AWS key shapes and well-known token shapes
    ("credentials AKIALKMKTEST00000033 in use", "AKIALKMKTEST00000033"),
    ("session ASIALKMKTEST00000034 expired", "ASIALKMKTEST00000034"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY0000035KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY0000035KEY"),  # noqa: E501
    ("secret key wJalrXUtnFEMI/K7MDENG+bPxRfiCY0000036KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCY0000036KEY"),  # noqa: E501
    ("Authorization: Bearer BearerTok37abcdefgh", "BearerTok37abcdefgh"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpemKey38QIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
     "MIIEpemKey38QIBAAKCAQEA"),
    ("token ghp_GithubTok39abcdefghijklmnopqrstuvwxyz0 used", "ghp_GithubTok39abcdefghijklmnopqrstuvwxyz0"),  # noqa: E501
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJqd3Q0MCJ9.JwtSig40abcdefgh", "eyJzdWIiOiJqd3Q0MCJ9"),
    # quotes, SQL, nested configuration
    ('jdbc:oracle:thin:scott/"Qu0ted Pw41"@//db.example.com:1521/orcl', "Qu0ted Pw41"),
    ("jdbc:postgresql://etl:it'sPw42@db.example.com/shop", "it'sPw42"),
    ("CREATE USER loader IDENTIFIED BY 'SqlIdentified43'", "SqlIdentified43"),
    ("ALTER ROLE etl WITH PASSWORD 'SqlAlterRole44';", "SqlAlterRole44"),
    ('sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required '
     'username="u" password="KafkaJaasPw45";', "KafkaJaasPw45"),
    ("s3a://AKIALKMKTEST00000046:S3aUserInfo46/x@bucket/key", "S3aUserInfo46/x"),
    ("spark.hadoop.fs.azure.account.key.acc.blob.core.windows.net=AzureConfKey47",
     "AzureConfKey47"),
    ("https://x-access-token:ghs_GithubApp48abcdefghijklmnopqrstuvwxyz@github.com/o/r.git",
     "ghs_GithubApp48abcdefghijklmnopqrstuvwxyz"),
    ("Driver={ODBC Driver 18};Server=h;Uid=sa;Pwd=OdbcPwd49;", "OdbcPwd49"),
    ('{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nGcpKey50abc'
     '\\n-----END PRIVATE KEY-----\\n"}', "GcpKey50abc"),
    ("<property><name>x</name></property><password>XmlPassword51</password>", "XmlPassword51"),
    ("DB_PASS=SnakePartPass52 DB_HOST=h", "SnakePartPass52"),
    ("es.net.http.auth.pass=DottedPartPass53", "DottedPartPass53"),
    ("Authorization: token HeaderToken54abc", "HeaderToken54abc"),
    ("https://h/cb?next=%2Fx%3Fuser%3Du%26password%3DEncodedPw55%26a%3D1", "EncodedPw55"),
]

SECRETS = [secret for _, secret in SHAPES]
assert len(set(SECRETS)) == len(SECRETS) >= 30
assert all(secret in text for text, secret in SHAPES)


def leaks(blob: bytes | str) -> list[str]:
    """The secrets of the corpus that ``blob`` contains."""
    text = blob.decode("utf-8", "replace") if isinstance(blob, bytes) else blob
    return [s for s in SECRETS if s in text]
