package httpapi_test

import (
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	testenv.Main(m)
}
